// MCP in and out, end to end: this script plays the MCP client (a desktop app, an IDE) that an
// agent runs in. It launches `codemode-mcp`, which serves Code Mode over stdio from
// codemode.config.ts, whose `notes` connector is itself an MCP server (notes-server.ts):
//
//   main.ts ──stdio──► codemode-mcp (search · describe · execute) ──stdio──► notes-server.ts
//
// The "model's" program deletes a note; notes-server marks delete-note destructive, so the run
// pauses and Code Mode asks the person through MCP elicitation, inside this client. Accepting
// resumes the run. In a terminal you answer; elsewhere it is accepted for you. No keys, no network.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { askYesNo, indent } from "../shared/terminal.ts";

const bin = fileURLToPath(import.meta.resolve("@codemode/core/mcp").replace(/index\.js$/, "bin.js"));
const config = fileURLToPath(new URL("./codemode.config.ts", import.meta.url));

// --- the MCP client ----------------------------------------------------------------------------
// Declaring elicitation is what lets Code Mode ask the person instead of answering "paused".
const client = new Client(
  { name: "example-desktop-app", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  console.log(`\n[elicitation/create] ${request.params.message}`);
  const approved = await askYesNo("Approve?");
  if (!approved) return { action: "decline" };
  // The form has a required choice per pending call ("seq_<n>": "approve" or "deny"): a real
  // client renders it; this one approves every call it was shown.
  const schema = request.params.mode === "url" ? undefined : request.params.requestedSchema;
  const choices = Object.fromEntries(
    Object.keys(schema?.properties ?? {})
      .filter((key) => key.startsWith("seq_"))
      .map((key) => [key, "approve"]),
  );
  return { action: "accept", content: { ...choices, reason: "tidying up" } };
});
await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, "--config", config] }));

const { tools } = await client.listTools();
console.log(`Code Mode's MCP tools: ${tools.map((tool) => tool.name).join(", ")}`);

// --- what the agent does: search, describe, then one program ---------------------------------
const found = await call("search", { query: "delete a note" });
console.log(
  `\nsearch("delete a note") → ${(found.results as Array<{ path: string }>).map((result) => result.path).join(", ")}`,
);
const described = await call("describe", { target: "notes.add_note" });
console.log(`\ndescribe("notes.add_note") →\n${indent(String(described.declaration))}`);

const program = `async () => {
  const added = await notes.add_note({ title: "Call the plumber", body: "before Friday" });
  const all = await notes.list_notes();
  const old = all.find((note) => note.title === "Old idea");
  if (old) await notes.delete_note({ id: old.id });
  return { added: added.id, deleted: old ? old.id : null, left: (await notes.list_notes()).map((note) => note.title) };
}`;
console.log(`\nexecute:\n${indent(program)}`);
const outcome = await call("execute", { code: program });
console.log(`\n→ ${JSON.stringify(outcome, null, 2)}`);

await client.close();

/** Calls a Code Mode tool and answers its structured content. */
async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  // A person may take a while to answer an approval question: wait up to 10 minutes.
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 10 * 60_000 });
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}
