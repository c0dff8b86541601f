/**
 * R-CON-5 R-ST-3, MCP out with a client that cannot be asked (no elicitation capability, like the
 * MCP Inspector CLI): `execute` answers the pause and says who approves it and where; the client
 * goes away; an operator approves from another process over the same SQLite file (as `codemode
 * approve <id>` does) and the run completes. docs/mcp.md tells this story.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { type CodemodeMcpServerOptions, createCodemodeMcpServer } from "@codemode/core/mcp";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { agentClient, structuredOf } from "./mcp-fixtures/codemode-setup.ts";
import { connectInMemory } from "./mcp-fixtures/notes-server.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The notes every process reaches, as a real service would be: one Map outside the runtimes. */
function notesConnector(notes: Map<number, string>) {
  return defineConnector({
    name: "notes",
    tools: {
      add_note: {
        execute: (args: { title: string }) => {
          const id = notes.size + 1;
          notes.set(id, args.title);
          return { id };
        },
      },
      delete_note: { requiresApproval: true, execute: (args: { id: number }) => notes.delete(args.id) },
    },
  });
}

const ADD_THEN_DELETE = `async () => {
  const { id } = await notes.add_note({ title: "draft" });
  await notes.delete_note({ id });
  return "deleted " + id;
}`;

/** One `codemode-mcp` process: its runtime over the SQLite file, and a client that declares no elicitation. */
async function serverProcess(file: string, notes: Map<number, string>, options: CodemodeMcpServerOptions) {
  const storage = sqliteStorage(file);
  const runtime = createCodemodeRuntime({ connectors: [notesConnector(notes)], storage });
  const mcp = createCodemodeMcpServer(runtime, options);
  const client = new Client({ name: "mcp-inspector-cli", version: "1.0.0" });
  await connectInMemory(mcp, client);
  /** The client disconnects; the process exits (what it held in memory is gone). */
  const exit = async () => {
    await client.close();
    await mcp.close();
    await runtime.close();
    await storage.close();
  };
  cleanups.push(exit);
  return { client, exit };
}

function scratchFile(): string {
  const directory = mkdtempSync(join(tmpdir(), "codemode-mcp-no-elicitation-"));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  return join(directory, "runs.sqlite");
}

describe("MCP: a client that cannot elicit, over a durable store", () => {
  it("execute pauses and names how it gets approved; after the client leaves, `codemode approve` from another process completes the run", async () => {
    const file = scratchFile();
    const notes = new Map<number, string>();
    // The config asks for elicitation, but this client did not declare it: it is never asked.
    const server = await serverProcess(file, notes, { elicitApproval: true });
    const paused = structuredOf(
      await server.client.callTool({ name: "execute", arguments: { code: ADD_THEN_DELETE } }),
    );
    const executionId = String(paused.executionId);
    expect(paused).toEqual({
      status: "paused",
      executionId,
      pending: [{ seq: 1, connector: "notes", method: "delete_note", args: { id: 1 } }],
      message: `Paused: an operator must approve the pending action (\`codemode approve ${executionId}\` or \`codemode inbox\`); the run then resumes by itself. Tell the user what waits and the execution id; do not re-issue the code. The operator sees the result; this server cannot show it to you later.`,
    });
    await server.exit();

    // `codemode approve <id>` loads the same config: a new runtime over the same file.
    const storage = sqliteStorage(file);
    const operator = createCodemodeRuntime({ connectors: [notesConnector(notes)], storage });
    cleanups.push(async () => {
      await operator.close();
      await storage.close();
    });
    expect(notes.get(1)).toBe("draft");
    const done = await operator.approve({ executionId, seq: 1, by: "ann" });
    expect(done).toMatchObject({ status: "completed", result: "deleted 1" });
    expect(notes.has(1)).toBe(false);
    expect((await operator.execution(executionId))?.log.find((entry) => entry.seq === 1)?.decision).toMatchObject({
      approved: true,
      by: "ann",
    });
  });

  it("with operator tools, the answer names this server's approve tool, which answers the result", async () => {
    const notes = new Map<number, string>();
    const server = await serverProcess(scratchFile(), notes, { operatorTools: true });
    const paused = structuredOf(
      await server.client.callTool({ name: "execute", arguments: { code: ADD_THEN_DELETE } }),
    );
    expect(paused.message).toBe(
      `Paused: an operator must approve the pending action (this server's approve tool, \`codemode approve ${String(paused.executionId)}\` or \`codemode inbox\`); the run then resumes by itself. Tell the user what waits and the execution id; do not re-issue the code. Call approve only when the user says so; it answers the result.`,
    );
    const done = await server.client.callTool({
      name: "approve",
      arguments: { executionId: paused.executionId, seq: 1 },
    });
    expect(structuredOf(done)).toMatchObject({ status: "completed", result: "deleted 1" });
  });

  it("a person who closes the question without deciding: the answer says so, then who approves instead", async () => {
    const notes = new Map<number, string>();
    const storage = sqliteStorage(scratchFile());
    const runtime = createCodemodeRuntime({ connectors: [notesConnector(notes)], storage });
    const mcp = createCodemodeMcpServer(runtime, { elicitApproval: true });
    const { client } = agentClient(() => ({ action: "cancel" }));
    await connectInMemory(mcp, client);
    cleanups.push(async () => {
      await client.close();
      await mcp.close();
      await runtime.close();
      await storage.close();
    });
    const paused = structuredOf(await client.callTool({ name: "execute", arguments: { code: ADD_THEN_DELETE } }));
    expect(paused.message).toMatch(
      /^Paused: the person closed the approval request without deciding\. An operator must approve the pending action \(`codemode approve [\w-]+` or `codemode inbox`\)/,
    );
  });
});
