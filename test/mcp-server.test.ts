/**
 * R-CON-5, MCP out: createCodemodeMcpServer serves a runtime to MCP clients. The runtime's own
 * connector is a real MCP server too (MCP in), so each story crosses MCP twice. In-memory transport;
 * stdio and Streamable HTTP are in mcp-transports.test.ts.
 */
import { type CodemodeMcpServerOptions, createCodemodeMcpServer } from "@codemode/core/mcp";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Answer,
  acceptAll,
  agentClient,
  DELETE_TWO,
  notesRuntime,
  structuredOf,
} from "./mcp-fixtures/codemode-setup.ts";
import { connectInMemory } from "./mcp-fixtures/notes-server.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(options: CodemodeMcpServerOptions = {}, answer?: Answer) {
  const setup = await notesRuntime();
  const mcp = createCodemodeMcpServer(setup.runtime, options);
  const { client, asked } = agentClient(answer);
  await connectInMemory(mcp, client);
  cleanups.push(setup.close, mcp.close, () => client.close());
  /** A second client on the same runtime, for an operator. */
  const operator = async (): Promise<Client> => {
    const operatorServer = createCodemodeMcpServer(setup.runtime, { operatorTools: true });
    const { client: operatorClient } = agentClient();
    await connectInMemory(operatorServer, operatorClient);
    cleanups.push(operatorServer.close, () => operatorClient.close());
    return operatorClient;
  };
  const call = async (name: string, args: Record<string, unknown>, on: Client = client) =>
    on.callTool({ name, arguments: args });
  return { ...setup, mcp, client, asked, operator, call };
}

describe("createCodemodeMcpServer: tools for agents", () => {
  it("lists search, describe and execute with output schemas; operator tools only when enabled", async () => {
    const { client, operator } = await serve();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["search", "describe", "execute"]);
    for (const tool of tools) expect(tool.outputSchema).toMatchObject({ type: "object" });
    expect(tools.find((tool) => tool.name === "execute")?.description).toContain("- notes (Short notes with a…): ");
    expect(tools.find((tool) => tool.name === "search")?.annotations).toMatchObject({ readOnlyHint: true });
    const operatorTools = (await (await operator()).listTools()).tools.map((tool) => tool.name);
    expect(operatorTools).toEqual(["search", "describe", "execute", "pending", "approve", "reject", "decide"]);
    await expect(client.callTool({ name: "approve", arguments: { executionId: "x" } })).rejects.toThrow(
      /approve not found/,
    );
  });

  it("search and describe answer structured content that the client checks against the output schema", async () => {
    const { call } = await serve();
    const found = structuredOf(await call("search", { query: "add a note" }));
    expect(found.results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "method", path: "notes.add_note", requiresApproval: false }),
      ]),
    );
    const described = structuredOf(await call("describe", { target: "notes.add_note" }));
    expect(described).toMatchObject({ kind: "method", path: "notes.add_note" });
    expect(described.declaration).toMatch(/title: string/);
    expect(structuredOf(await call("describe", { target: "nothing.here" }))).toMatchObject({
      error: expect.stringContaining("nothing is named"),
    });
  });

  it("execute answers the model-facing outcome; a failing program is isError with its code", async () => {
    const { call } = await serve();
    const done = await call("execute", { code: `async () => (await notes.add_note({ title: "Milk" })).id` });
    expect(done.isError).toBeFalsy();
    expect(structuredOf(done)).toEqual({ status: "completed", executionId: expect.any(String), result: 1 });
    expect(JSON.parse((done.content as Array<{ text: string }>)[0]!.text)).toEqual(structuredOf(done));
    const broken = await call("execute", { code: "async () => { return (" });
    expect(broken.isError).toBe(true);
    expect(structuredOf(broken)).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
    expect(structuredOf(broken)).not.toHaveProperty("calls");
    const wrongInput = await call("execute", { code: 42 });
    expect(wrongInput).toMatchObject({ isError: true, content: [{ type: "text", text: "code must be a string" }] });
  });
});

describe("createCodemodeMcpServer: pauses for operators", () => {
  it("pause → pending → approve across the server's tools, until the program completes", async () => {
    const { call, operator, notes, calls } = await serve();
    const paused = structuredOf(await call("execute", { code: DELETE_TWO }));
    expect(paused).toMatchObject({
      status: "paused",
      pending: [{ connector: "notes", method: "delete_note", args: { id: 1 } }],
      message: expect.stringContaining("do not re-issue"),
    });
    expect(notes.size).toBe(2);

    const ops = await operator();
    const pending = structuredOf(await call("pending", {}, ops));
    // What an operator needs to decide: the tool's description, and its input schema for an edit.
    expect(pending.items).toEqual([
      {
        executionId: paused.executionId,
        seq: 2,
        pauseId: "2.1",
        connector: "notes",
        method: "delete_note",
        args: { id: 1 },
        description: "Deletes a note for good.",
        inputSchema: expect.objectContaining({ type: "object", required: ["id"] }),
      },
    ]);
    const next = structuredOf(await call("approve", { executionId: paused.executionId, seq: 2 }, ops));
    expect(next).toMatchObject({ status: "paused", pending: [{ seq: 3, args: { id: 2 } }] });
    const stale = await call("approve", { executionId: paused.executionId, seq: 2 }, ops);
    expect(structuredOf(stale)).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    const done = structuredOf(
      await call("approve", { executionId: paused.executionId, seq: 3, reason: "cleanup" }, ops),
    );
    expect(done).toMatchObject({ status: "completed", result: 0 });
    expect(calls.filter((entry) => entry.name === "delete-note")).toHaveLength(2);
    expect(structuredOf(await call("pending", {}, ops)).items).toEqual([]);
  });

  it("reject ends the run rejected with the operator's reason; the action never runs", async () => {
    const { call, operator, notes, runtime } = await serve();
    const paused = structuredOf(await call("execute", { code: DELETE_TWO }));
    const ops = await operator();
    expect(await call("reject", { executionId: paused.executionId }, ops)).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining("reject needs seq") }],
    });
    const rejected = structuredOf(
      await call("reject", { executionId: paused.executionId, seq: 2, reason: "keep them" }, ops),
    );
    expect(rejected).toMatchObject({
      status: "rejected",
      reason: "keep them",
      rejected: { seq: 2, method: "delete_note" },
    });
    expect(notes.size).toBe(2);
    const state = await runtime.execution(String(paused.executionId));
    expect(state?.status).toBe("rejected");
    expect(state?.log.find((entry) => entry.seq === 2)?.decision).toMatchObject({
      approved: false,
      by: 'operator via an MCP client that calls itself "test-client"',
    });
  });
});

describe("createCodemodeMcpServer: approval through elicitation (beyond)", () => {
  it("asks the person at each pause; accept resumes, so execute answers the completed run", async () => {
    const { call, asked, notes, runtime } = await serve({ elicitApproval: true }, acceptAll({ reason: "tidy up" }));
    const done = structuredOf(await call("execute", { code: DELETE_TWO }));
    expect(done).toMatchObject({ status: "completed", result: 0 });
    expect(asked.map((question) => question.message)).toEqual([
      expect.stringContaining('notes.delete_note({"id":1})'),
      expect.stringContaining('notes.delete_note({"id":2})'),
    ]);
    expect(notes.size).toBe(0);
    const log = (await runtime.execution(String(done.executionId)))?.log ?? [];
    expect(log.find((entry) => entry.seq === 2)?.decision).toMatchObject({
      approved: true,
      by: 'elicitation, answered in an MCP client that calls itself "test-client"',
      reason: "tidy up",
    });
  });

  it("decline rejects: the action does not run and the agent is told so", async () => {
    const { call, notes } = await serve({ elicitApproval: true }, () => ({ action: "decline" }));
    const rejected = await call("execute", { code: DELETE_TWO });
    expect(rejected.isError).toBeFalsy();
    expect(structuredOf(rejected)).toMatchObject({
      status: "rejected",
      rejected: { method: "delete_note", args: { id: 1 } },
      message: expect.stringContaining("did not run"),
    });
    expect(notes.size).toBe(2);
  });

  it("accepts the first, declines the second: the first delete stays done", async () => {
    let answers = 0;
    const { call, notes } = await serve({ elicitApproval: true }, (params) => {
      answers += 1;
      return answers === 1 ? acceptAll()(params) : { action: "decline", content: { reason: "not that one" } };
    });
    const rejected = structuredOf(await call("execute", { code: DELETE_TWO }));
    expect(rejected).toMatchObject({ status: "rejected", reason: "not that one", rejected: { args: { id: 2 } } });
    expect([...notes.keys()]).toEqual([2]);
  });

  it("a question closed without a decision leaves the run paused for an operator", async () => {
    const { call, operator } = await serve({ elicitApproval: true }, () => ({ action: "cancel" }));
    const paused = structuredOf(await call("execute", { code: DELETE_TWO }));
    expect(paused).toMatchObject({ status: "paused", message: expect.stringContaining("without deciding") });
    const ops = await operator();
    expect(structuredOf(await call("pending", { executionId: paused.executionId }, ops)).items).toHaveLength(1);
  });

  it("by default (elicitApproval: false) the pause is answered, even to a client that can be asked", async () => {
    const { call, asked } = await serve({}, acceptAll());
    expect(structuredOf(await call("execute", { code: DELETE_TWO }))).toMatchObject({ status: "paused" });
    expect(asked).toEqual([]);
  });
});
