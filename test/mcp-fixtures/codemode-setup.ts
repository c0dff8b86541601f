/** Code Mode over the notes MCP server, and SDK clients of a Code Mode MCP server, for the MCP tests. */
import { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "@codemode/core";
import { mcpConnector } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { connectInMemory, createNotesServer, type NotesServer } from "./notes-server.ts";

/** A runtime whose `notes` connector is the notes MCP server (MCP in). */
export async function notesRuntime(
  options: Omit<CodemodeRuntimeOptions, "connectors"> = {},
): Promise<NotesServer & { runtime: CodemodeRuntime; close(): Promise<void> }> {
  const notesServer = createNotesServer();
  const client = await connectInMemory(notesServer.server);
  const runtime = createCodemodeRuntime({ connectors: [await mcpConnector({ name: "notes", client })], ...options });
  return {
    ...notesServer,
    runtime,
    async close() {
      await runtime.close();
      await client.close();
    },
  };
}

export type Answer = (request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;

/**
 * An SDK client as an agent's host would be: with `answer`, it declares elicitation and answers
 * each question with it (the questions are kept in `asked`).
 */
export function agentClient(answer?: Answer): { client: Client; asked: Array<ElicitRequest["params"]> } {
  const asked: Array<ElicitRequest["params"]> = [];
  const client = new Client(
    { name: "test-client", version: "1.0.0" },
    answer ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  }
  return { client, asked };
}

/**
 * A client that accepts every approval form as shown: each required choice (`seq_<n>`) answered
 * "approve", plus `extra` (a reason). The form requires a choice per action: an empty accept decides nothing.
 */
export function acceptAll(extra: Record<string, string> = {}): (params: ElicitRequest["params"]) => ElicitResult {
  return (params) => {
    const properties = "requestedSchema" in params ? Object.keys(params.requestedSchema.properties) : [];
    const choices = Object.fromEntries(
      properties.filter((key) => key.startsWith("seq_")).map((key) => [key, "approve"]),
    );
    return { action: "accept", content: { ...choices, ...extra } };
  };
}

/** The structured content of a tool result, failing the test when there is none. */
export function structuredOf(result: unknown): Record<string, unknown> {
  const content = (result as { structuredContent?: unknown }).structuredContent;
  if (typeof content !== "object" || content === null)
    throw new Error(`no structuredContent in ${JSON.stringify(result)}`);
  return content as Record<string, unknown>;
}

export const DELETE_TWO = `async () => {
  const first = await notes.add_note({ title: "one" });
  const second = await notes.add_note({ title: "two" });
  await notes.delete_note({ id: first.id });
  await notes.delete_note({ id: second.id });
  return (await notes.list_notes()).length;
}`;

/** Two deletes waited on together (seqs 2 and 3); the program reports what each became. */
export const DELETE_BOTH = `async () => {
  const one = await notes.add_note({ title: "one" });
  const two = await notes.add_note({ title: "two" });
  const settled = await Promise.allSettled([notes.delete_note({ id: one.id }), notes.delete_note({ id: two.id })]);
  return settled.map((each) => each.status === "fulfilled" ? each.value : each.reason.name + ": " + each.reason.message);
}`;
