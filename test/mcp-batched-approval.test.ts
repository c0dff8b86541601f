/**
 * R-AP-8 R-AP-9 R-AP-11 over MCP out: a program that waits on several approvals at once is put to
 * the person in one elicitation form (an approve/deny choice per action), answered in one
 * `runtime.decide`; the client's answer is hostile input; actions reserved to operators are never
 * offered; operators decide with the `decide` tool. Real SDK clients, in-memory and Streamable HTTP.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { type CodemodeMcpServerOptions, createCodemodeMcpServer, mcpConnector } from "@codemode/core/mcp";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Answer,
  acceptAll,
  agentClient,
  DELETE_BOTH,
  notesRuntime,
  structuredOf,
} from "./mcp-fixtures/codemode-setup.ts";
import { connectInMemory, createNotesServer } from "./mcp-fixtures/notes-server.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A delete and an archive waited on together (seqs 1 and 2). */
const DELETE_AND_ARCHIVE = `async () => {
  const { id } = await notes.add_note({ title: "one" });
  const settled = await Promise.allSettled([notes.delete_note({ id }), notes.archive_note({ id })]);
  return settled.map((each) => each.status === "fulfilled" ? each.value : each.reason.name + ": " + each.reason.message);
}`;

const BY = 'elicitation, answered in an MCP client that calls itself "test-client"';

async function serve(
  answer: Answer | undefined,
  options: CodemodeMcpServerOptions = { elicitApproval: true },
  runtimeOptions: Parameters<typeof notesRuntime>[0] = {},
) {
  const setup = await notesRuntime(runtimeOptions);
  const mcp = createCodemodeMcpServer(setup.runtime, options);
  const { client, asked } = agentClient(answer);
  await connectInMemory(mcp, client);
  cleanups.push(setup.close, mcp.close, () => client.close());
  const execute = async (code: string) => structuredOf(await client.callTool({ name: "execute", arguments: { code } }));
  const ran = (name: string) => setup.calls.filter((call) => call.name === name).map((call) => call.args);
  return { ...setup, mcp, client, asked, execute, ran };
}

/** The form property whose title shows `args` (the client finds each action by what it shows). */
function propertyShowing(request: ElicitRequestFormParams | undefined, args: string): string {
  const properties = request?.requestedSchema.properties ?? {};
  const found = Object.entries(properties).find(([, schema]) => schema.title?.includes(args));
  if (!found) throw new Error(`no property shows ${args}: ${JSON.stringify(properties)}`);
  return found[0];
}

/** Approves the first delete and denies the second, with a reason. */
const approveOneDenyOther: Answer = (request) => ({
  action: "accept",
  content: {
    [propertyShowing(request as ElicitRequestFormParams, '{"id":1}')]: "approve",
    [propertyShowing(request as ElicitRequestFormParams, '{"id":2}')]: "deny",
    reason: "keep the second",
  },
});

describe("MCP elicitation of a batched pause", () => {
  it("R-AP-8: one form lists both pending deletes, an approve/deny choice each, titled with the call and its tool's description", async () => {
    const { execute, asked } = await serve(approveOneDenyOther);
    await execute(DELETE_BOTH);
    expect(asked).toHaveLength(1);
    const form = asked[0] as ElicitRequestFormParams;
    expect(form.requestedSchema).toEqual({
      type: "object",
      properties: {
        seq_2: {
          type: "string",
          title: 'notes.delete_note({"id":1})',
          description: "Deletes a note for good.",
          enum: ["approve", "deny"],
          default: "approve",
        },
        seq_3: {
          type: "string",
          title: 'notes.delete_note({"id":2})',
          description: "Deletes a note for good.",
          enum: ["approve", "deny"],
          default: "approve",
        },
        reason: expect.objectContaining({ type: "string", title: "Reason" }),
      },
      required: ["seq_2", "seq_3"],
    });
    expect(form.message).toContain('- call 2: notes.delete_note({"id":1})\n- call 3: notes.delete_note({"id":2})');
  });

  it("R-AP-9: approve one, deny the other with a reason: the program catches the denial and says so; the approved delete ran once, the denied one never", async () => {
    const { execute, ran, notes, runtime } = await serve(approveOneDenyOther);
    const done = await execute(DELETE_BOTH);
    expect(done).toEqual({
      status: "completed",
      executionId: expect.any(String),
      result: ["deleted 1", `ApprovalDenied: notes.delete_note({"id":2}) was denied by ${BY}: keep the second`],
      // R-AP-9: the client's model is told what ran and what was denied, whatever the program returned.
      decided: [
        expect.objectContaining({ call: "notes.delete_note", args: { id: 1 }, decision: "approved", outcome: "ran" }),
        expect.objectContaining({
          call: "notes.delete_note",
          args: { id: 2 },
          decision: "denied",
          by: BY,
          reason: "keep the second",
          outcome: "denied",
        }),
      ],
    });
    expect(ran("delete-note")).toEqual([{ id: 1 }]);
    expect([...notes.keys()]).toEqual([2]);
    // Who asked for the run, as the inbox and `codemode show` say it: the client's claim of its name.
    expect((await runtime.execution(String(done.executionId)))?.requestedBy).toBe(
      'an MCP client that calls itself "test-client"',
    );
    const log = (await runtime.execution(String(done.executionId)))?.log ?? [];
    expect(log.filter((entry) => entry.seq >= 2).map((entry) => [entry.seq, entry.state, entry.decision])).toEqual([
      [
        2,
        "applied",
        expect.objectContaining({ approved: true, decision: "approve", by: BY, reason: "keep the second" }),
      ],
      [3, "denied", expect.objectContaining({ approved: false, decision: "deny", by: BY, reason: "keep the second" })],
    ]);
  });

  it("R-AP-9: an uncaught denial ends the run; execute answers the error, and the approved call stays done", async () => {
    const { execute, ran } = await serve(approveOneDenyOther);
    const ended = await execute(`async () => {
      const one = await notes.add_note({ title: "one" });
      const two = await notes.add_note({ title: "two" });
      return Promise.all([notes.delete_note({ id: one.id }), notes.delete_note({ id: two.id })]);
    }`);
    expect(ended).toMatchObject({ status: "error", error: expect.stringContaining("was denied by") });
    expect(ran("delete-note")).toEqual([{ id: 1 }]);
  });

  it("R-AP-8: accept without a choice per action decides nothing (the run stays paused, nothing runs); decline rejects the run and nothing pending runs", async () => {
    const silent = await serve(() => ({ action: "accept" }));
    expect(await silent.execute(DELETE_BOTH)).toMatchObject({ status: "paused" });
    expect(silent.ran("delete-note")).toEqual([]);
    const partial = await serve(() => ({ action: "accept", content: { seq_2: "approve" } }) as ElicitResult);
    expect(await partial.execute(DELETE_BOTH)).toMatchObject({ status: "paused" });
    expect(partial.ran("delete-note")).toEqual([]);
    const accepting = await serve(acceptAll());
    expect(await accepting.execute(DELETE_BOTH)).toMatchObject({
      status: "completed",
      result: ["deleted 1", "deleted 2"],
    });
    const declining = await serve(() => ({ action: "decline", content: { reason: "not today" } }));
    expect(await declining.execute(DELETE_BOTH)).toMatchObject({
      status: "rejected",
      reason: "not today",
      rejected: { seq: 2, method: "delete_note" },
    });
    expect(declining.ran("delete-note")).toEqual([]);
  });

  it("R-AP-9 over Streamable HTTP: the form travels on the call's stream and the answer is applied", async () => {
    const setup = await notesRuntime();
    const mcp = createCodemodeMcpServer(setup.runtime, { elicitApproval: true });
    const listener = await mcp.listen();
    const { client } = agentClient(approveOneDenyOther);
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    cleanups.push(setup.close, mcp.close, listener.close, () => client.close());
    const done = structuredOf(await client.callTool({ name: "execute", arguments: { code: DELETE_BOTH } }));
    expect(done).toMatchObject({
      status: "completed",
      result: ["deleted 1", expect.stringContaining("ApprovalDenied")],
    });
    expect(setup.calls.filter((call) => call.name === "delete-note").map((call) => call.args)).toEqual([{ id: 1 }]);
  });
});

describe("MCP elicitation: the client's answer is hostile input", () => {
  const hostile: Array<[string, Record<string, unknown>, RegExp]> = [
    ["an extra property", { seq_2: "approve", seq_3: "approve", admin: "yes" }, /"admin" was not asked/],
    ["a value the form does not allow", { seq_2: "approve", seq_3: "yes" }, /asking the person failed/],
    ["a seq the form did not show", { seq_2: "approve", seq_3: "approve", seq_0: "approve" }, /"seq_0" was not asked/],
    ["a reason that is not text", { seq_2: "approve", reason: 5 }, /asking the person failed/],
  ];
  for (const [what, content, why] of hostile) {
    it(`R-AP-9: ${what} is refused whole: nothing is decided, nothing runs, both actions stay pending`, async () => {
      const { execute, ran, runtime } = await serve(() => ({ action: "accept", content }) as ElicitResult);
      const paused = await execute(DELETE_BOTH);
      expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 2 }, { seq: 3 }] });
      expect(paused.message).toMatch(why);
      expect(paused.message).toContain("An operator must approve the pending actions");
      expect(ran("delete-note")).toEqual([]);
      const state = await runtime.execution(String(paused.executionId));
      expect(state?.status).toBe("paused");
      expect(state?.log.filter((entry) => entry.decision !== undefined)).toEqual([]);
      expect((await runtime.pending(String(paused.executionId))).items.map((action) => action.seq)).toEqual([2, 3]);
    });
  }
});

describe("MCP elicitation: actions reserved to operators (R-AP-11)", () => {
  const operatorOnlyDeletes = { chatApprovals: (action: { method: string }) => action.method !== "delete_note" };

  it("R-AP-11: an operator-only action is not offered; the other is decided; the run waits for an operator, who decides with the decide tool", async () => {
    const { execute, asked, ran, runtime } = await serve(
      (request) => ({
        action: "accept",
        content: { [propertyShowing(request as ElicitRequestFormParams, "archive")]: "approve" },
      }),
      { elicitApproval: true, operatorTools: false },
      operatorOnlyDeletes,
    );
    const paused = await execute(DELETE_AND_ARCHIVE);
    expect(asked).toHaveLength(1);
    expect(Object.keys((asked[0] as ElicitRequestFormParams).requestedSchema.properties)).toEqual(["seq_2", "reason"]);
    expect(asked[0]?.message).toContain("1 more wait for an operator's decision.");
    expect(paused).toMatchObject({
      status: "paused",
      pending: [{ seq: 1, method: "delete_note" }],
      message: expect.stringContaining("this action is reserved to an operator's approval."),
    });
    expect(ran("archive-note")).toEqual([{ id: 1 }]);
    expect(ran("delete-note")).toEqual([]);

    const { client: operator } = agentClient();
    await connectInMemory(createCodemodeMcpServer(runtime, { operatorTools: true }), operator);
    cleanups.push(() => operator.close());
    const done = await operator.callTool({
      name: "decide",
      arguments: { executionId: paused.executionId, decisions: [{ seq: 1, decision: "deny", reason: "keep it" }] },
    });
    expect(structuredOf(done)).toMatchObject({
      status: "completed",
      result: [
        expect.stringMatching(
          /^ApprovalDenied: notes.delete_note\(\{"id":1\}\) was denied by operator via .*: keep it$/,
        ),
        "archived 1",
      ],
    });
    expect(ran("delete-note")).toEqual([]);
  });

  it("R-AP-11: an answer that names the operator-only action is refused; nothing runs", async () => {
    const { execute, ran } = await serve(
      () => ({ action: "accept", content: { seq_1: "approve", seq_2: "approve" } }),
      { elicitApproval: true },
      operatorOnlyDeletes,
    );
    const paused = await execute(DELETE_AND_ARCHIVE);
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 1 }, { seq: 2 }] });
    expect(paused.message).toMatch(/"seq_1" was not asked/);
    expect(ran("delete-note")).toEqual([]);
    expect(ran("archive-note")).toEqual([]);
  });

  it('R-AP-11: a tool with approvers: "operator" is never put to the client, even when chatApprovals lets chats decide', async () => {
    const notesServer = createNotesServer();
    const notesClient = await connectInMemory(notesServer.server);
    const connector = await mcpConnector({
      name: "notes",
      client: notesClient,
      tool: (name, definition) => (name === "delete-note" ? { ...definition, approvers: "operator" } : undefined),
    });
    const runtime = createCodemodeRuntime({ connectors: [connector], chatApprovals: true });
    const mcp = createCodemodeMcpServer(runtime, { elicitApproval: true });
    const { client, asked } = agentClient(acceptAll());
    await connectInMemory(mcp, client);
    cleanups.push(
      () => notesClient.close(),
      () => runtime.close(),
      mcp.close,
      () => client.close(),
    );
    const paused = structuredOf(await client.callTool({ name: "execute", arguments: { code: DELETE_AND_ARCHIVE } }));
    expect(Object.keys((asked[0] as ElicitRequestFormParams).requestedSchema.properties)).toEqual(["seq_2", "reason"]);
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 1, method: "delete_note" }] });
    expect(notesServer.calls.map((call) => call.name)).toEqual(["add-note", "archive-note"]);
  });
});

describe("MCP operator tools with several pending actions", () => {
  async function pausedForOperator() {
    const setup = await serve(undefined, { operatorTools: true });
    const paused = await setup.execute(DELETE_BOTH);
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 2 }, { seq: 3 }] });
    const call = async (name: string, args: Record<string, unknown>) =>
      setup.client.callTool({ name, arguments: { executionId: paused.executionId, ...args } });
    return { ...setup, paused, call };
  }

  it("R-AP-8: pending lists both actions; approve decides one, the other stays pending", async () => {
    const { call, ran } = await pausedForOperator();
    expect(structuredOf(await call("pending", {})).items).toMatchObject([{ seq: 2 }, { seq: 3 }]);
    expect(structuredOf(await call("approve", { seq: 3 }))).toMatchObject({ status: "paused", pending: [{ seq: 2 }] });
    expect(ran("delete-note")).toEqual([{ id: 2 }]);
    expect(structuredOf(await call("pending", {})).items).toMatchObject([{ seq: 2 }]);
  });

  it("R-AP-9: decide denies one and edits the other in one call; the edit runs with the operator's arguments", async () => {
    const { call, ran, runtime, paused } = await pausedForOperator();
    const done = structuredOf(
      await call("decide", {
        decisions: [
          { seq: 2, decision: "deny", reason: "keep it" },
          { seq: 3, decision: "edit", args: { id: 99 } },
        ],
      }),
    );
    expect(done).toMatchObject({
      status: "completed",
      result: [expect.stringMatching(/^ApprovalDenied: .*: keep it$/), "no note 99"],
    });
    expect(ran("delete-note")).toEqual([{ id: 99 }]);
    const log = (await runtime.execution(String(paused.executionId)))?.log ?? [];
    expect(log.find((entry) => entry.seq === 3)?.decision).toMatchObject({
      decision: "edit",
      by: 'operator via an MCP client that calls itself "test-client"',
    });
  });

  it("R-AP-9: decide input that does not fit its schema, or arguments the tool refuses, change nothing", async () => {
    const { call, ran, runtime, paused, client } = await pausedForOperator();
    const refusals = [
      { decisions: [{ seq: 2, decision: "maybe" }] },
      { decisions: [{ seq: 2, decision: "approve", admin: true }] },
      { decisions: [] },
      { decisions: [{ seq: 2, decision: "approve" }], extra: 1 },
    ];
    for (const input of refusals) {
      const refused = await call("decide", input);
      expect(refused).toMatchObject({
        isError: true,
        content: [{ text: expect.stringContaining("Invalid arguments for decide") }],
      });
    }
    const wrongArgs = await call("decide", { decisions: [{ seq: 2, decision: "edit", args: { id: "one" } }] });
    expect(wrongArgs.isError).toBe(true);
    expect(structuredOf(wrongArgs)).toMatchObject({ status: "error", code: "INVALID_DECISION" });
    const stale = await call("decide", { decisions: [{ seq: 7, decision: "approve" }] });
    expect(structuredOf(stale)).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(ran("delete-note")).toEqual([]);
    expect((await runtime.pending(String(paused.executionId))).items.map((action) => action.seq)).toEqual([2, 3]);
    const decideTool = (await client.listTools()).tools.find((tool) => tool.name === "decide");
    expect(decideTool?.inputSchema.required).toEqual(["executionId", "decisions"]);
  });
});
