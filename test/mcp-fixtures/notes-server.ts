/**
 * A real MCP server built with the SDK's McpServer, for the MCP tests: notes with every result
 * shape (structured, JSON text, plain text, isError) and every annotation the connector reads.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

export interface Note {
  id: number;
  title: string;
  body: string;
}

export interface NotesServer {
  server: McpServer;
  notes: Map<number, Note>;
  /** Every tools/call the server received: tool name, arguments and `_meta`. */
  calls: Array<{ name: string; args: unknown; meta: unknown }>;
}

export function createNotesServer(): NotesServer {
  const server = new McpServer(
    { name: "notes", version: "1.0.0" },
    { instructions: "Short notes with a title and a body." },
  );
  const notes = new Map<number, Note>();
  const calls: NotesServer["calls"] = [];
  let nextId = 1;
  const record = (name: string, args: unknown, extra: { _meta?: unknown }) =>
    calls.push({ name, args, meta: extra._meta });

  server.registerTool(
    "add-note",
    {
      title: "Add note",
      description: "Adds a note and answers its id.",
      inputSchema: { title: z.string().describe("The note's title"), body: z.string().optional() },
      outputSchema: { id: z.number().int(), title: z.string() },
      // Adding says it destroys nothing; a tool that says nothing pauses by default (MCP's defaults).
      annotations: { idempotentHint: false, destructiveHint: false },
    },
    async (args, extra) => {
      record("add-note", args, extra);
      const note = { id: nextId++, title: args.title, body: args.body ?? "" };
      notes.set(note.id, note);
      return {
        content: [{ type: "text", text: JSON.stringify({ id: note.id, title: note.title }) }],
        structuredContent: { id: note.id, title: note.title },
      };
    },
  );
  server.registerTool(
    "get-note",
    {
      description: "One note, as JSON text.",
      inputSchema: { id: z.number().int() },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      record("get-note", args, extra);
      const note = notes.get(args.id);
      if (!note) return { isError: true, content: [{ type: "text", text: `no note ${args.id}` }] };
      return { content: [{ type: "text", text: JSON.stringify(note) }] };
    },
  );
  server.registerTool(
    "list-notes",
    { description: "Every note's id and title.", annotations: { readOnlyHint: true, idempotentHint: true } },
    async (extra) => {
      record("list-notes", {}, extra);
      return {
        content: [{ type: "text", text: JSON.stringify([...notes.values()].map(({ id, title }) => ({ id, title }))) }],
      };
    },
  );
  server.registerTool(
    "delete-note",
    {
      description: "Deletes a note for good.",
      inputSchema: { id: z.number().int() },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async (args, extra) => {
      record("delete-note", args, extra);
      const existed = notes.delete(args.id);
      return { content: [{ type: "text", text: existed ? `deleted ${args.id}` : `no note ${args.id}` }] };
    },
  );
  server.registerTool(
    "archive-note",
    { description: "Moves a note to the archive.", inputSchema: { id: z.number().int() } },
    async (args, extra) => {
      record("archive-note", args, extra);
      return { content: [{ type: "text", text: `archived ${args.id}` }] };
    },
  );
  server.registerTool(
    "greet",
    { description: "Says hello in plain text.", inputSchema: { name: z.string() } },
    async (args, extra) => {
      record("greet", args, extra);
      return { content: [{ type: "text", text: `Hello, ${args.name}` }] };
    },
  );
  server.registerTool("fail", { description: "Always fails." }, async (extra) => {
    record("fail", {}, extra);
    return { isError: true, content: [{ type: "text", text: "the disk is full" }] };
  });
  return { server, notes, calls };
}

/** A connected SDK client of `server` over the in-memory transport. */
export async function connectInMemory(
  server: { connect(transport: InMemoryTransport): Promise<unknown> },
  client = new Client({ name: "test-client", version: "1.0.0" }),
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return client;
}
