// A small MCP server built with the SDK: notes kept in memory, over stdio. It stands for any MCP
// server you already run (files, GitHub, a database…). Its annotations are what Code Mode reads:
// `delete-note` says it is destructive, so Code Mode pauses for approval before it runs;
// `add-note` says it only adds (`destructiveHint: false`): a tool that says nothing may be
// destructive (the MCP specification's default), and would pause too.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const notes = new Map<number, { id: number; title: string; body: string }>([
  [1, { id: 1, title: "Groceries", body: "milk, bread" }],
  [2, { id: 2, title: "Old idea", body: "a bike shed, painted" }],
]);
let nextId = 3;

const server = new McpServer(
  { name: "notes", version: "1.0.0" },
  { instructions: "Short notes, each with a title and a body." },
);

server.registerTool(
  "add-note",
  {
    title: "Add a note",
    description: "Adds a note; answers its id.",
    inputSchema: { title: z.string().describe("A short title"), body: z.string().optional() },
    outputSchema: { id: z.number().int(), title: z.string() },
    annotations: { destructiveHint: false },
  },
  async ({ title, body }) => {
    const note = { id: nextId++, title, body: body ?? "" };
    notes.set(note.id, note);
    return { content: [{ type: "text", text: `added note ${note.id}` }], structuredContent: { id: note.id, title } };
  },
);

server.registerTool(
  "list-notes",
  { description: "Every note's id and title.", annotations: { readOnlyHint: true } },
  async () => ({
    content: [{ type: "text", text: JSON.stringify([...notes.values()].map(({ id, title }) => ({ id, title }))) }],
  }),
);

server.registerTool(
  "read-note",
  {
    description: "One note with its body.",
    inputSchema: { id: z.number().int() },
    annotations: { readOnlyHint: true },
  },
  async ({ id }) => {
    const note = notes.get(id);
    return note
      ? { content: [{ type: "text", text: JSON.stringify(note) }] }
      : { isError: true, content: [{ type: "text", text: `there is no note ${id}` }] };
  },
);

server.registerTool(
  "delete-note",
  {
    description: "Deletes a note for good.",
    inputSchema: { id: z.number().int() },
    annotations: { destructiveHint: true, idempotentHint: true },
  },
  async ({ id }) => ({
    content: [{ type: "text", text: notes.delete(id) ? `deleted note ${id}` : `there was no note ${id}` }],
  }),
);

await server.connect(new StdioServerTransport());
