/**
 * Issue 43, R-MCP-T2 R-AP-8 R-AP-11 R-AP-12: a 2026-07-28 client that may decide but does not use
 * tasks is asked inside its `tools/call`, as a 2025 client is through elicitation: the call answers
 * `input_required` with the approval form and a request state the server signed; the SDK 2 client
 * fulfils it through its `elicitation/create` handler and retries; the run goes on and the call
 * answers the whole truth. A request state altered on the way decides nothing.
 */
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { DELETE_BOTH, DELETE_TWO, notesRuntime } from "./mcp-fixtures/codemode-setup.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Answer = (params: { message: string; requestedSchema: { properties: Record<string, unknown> } }) => unknown;

async function serve(answer: Answer) {
  const setup = await notesRuntime();
  const mcp = createCodemodeMcpServer(setup.runtime, { elicitApproval: true });
  const listener = await mcp.listen();
  cleanups.push(setup.close, () => mcp.close());
  const asked: unknown[] = [];
  const client = new Client(
    { name: "sdk2-in-call", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params);
    return answer(request.params as never) as never;
  });
  await client.connect(new StreamableHTTPClientTransport(listener.url));
  cleanups.push(() => client.close());
  return { ...setup, calls: setup.calls, listener, client, asked };
}

/** A `tools/call` of `execute` as a 2026 client that may decide sends it, by hand; its result. */
async function rawCall(url: URL, code: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const envelope = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  };
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "execute",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "execute", arguments: { code }, _meta: envelope, ...params },
    }),
  });
  const text = await response.text();
  const json = text.startsWith("{")
    ? text
    : (text.split("\n").find((line) => line.startsWith('data: {"result"')) ?? "").slice(6);
  return (JSON.parse(json) as { result: Record<string, unknown> }).result;
}

describe("issue 43, R-MCP-T2: a 2026-07-28 client without tasks is asked inside the call", () => {
  it("R-AP-8: one approved, one denied in the form; the call answers the completed run with both facts", async () => {
    const served = await serve(() => ({
      action: "accept",
      content: { seq_2: "approve", seq_3: "deny", reason: "keep the second" },
    }));
    const answer = await served.client.callTool({ name: "execute", arguments: { code: DELETE_BOTH } });
    expect(served.asked).toHaveLength(1);
    const structured = answer.structuredContent as { status: string; result: string[]; decided: unknown[] };
    expect(structured.status).toBe("completed");
    expect(structured.result[0]).toBe("deleted 1");
    expect(structured.result[1]).toMatch(/ApprovalDenied.*keep the second/);
    expect(structured.decided).toMatchObject([
      { seq: 2, decision: "approved", by: 'input_required answered in an MCP client that calls itself "sdk2-in-call"' },
      { seq: 3, decision: "denied", reason: "keep the second" },
    ]);
    expect(served.calls.filter((call) => call.name === "delete-note").map((call) => call.args)).toEqual([{ id: 1 }]);
  });

  it("decline rejects the run; cancel leaves it paused for an operator, and the call says so", async () => {
    const declined = await serve(() => ({ action: "decline" }));
    const rejected = await declined.client.callTool({ name: "execute", arguments: { code: DELETE_BOTH } });
    expect(rejected.structuredContent).toMatchObject({ status: "rejected" });
    expect(declined.calls.filter((call) => call.name === "delete-note")).toEqual([]);
    const cancelled = await serve(() => ({ action: "cancel" }));
    const paused = await cancelled.client.callTool({ name: "execute", arguments: { code: DELETE_BOTH } });
    expect(paused.structuredContent).toMatchObject({ status: "paused" });
    expect(String((paused.structuredContent as { message: string }).message)).toMatch(
      /closed the approval request without deciding.*operator/,
    );
  });

  it("R-AP-11, R-AP-12: a request state altered on the way (another set of actions) decides nothing", async () => {
    const served = await serve(() => ({ action: "cancel" }));
    const call = (params: Record<string, unknown>) => rawCall(served.listener.url, DELETE_BOTH, params);
    const first = await call({});
    expect(first.resultType).toBe("input_required");
    const key = Object.keys(first.inputRequests as object)[0] as string;
    const state = JSON.parse(Buffer.from(String(first.requestState), "base64url").toString("utf8"));
    const altered = Buffer.from(JSON.stringify({ ...state, seqs: [2], seq: 2 })).toString("base64url");
    const answers = { [key]: { action: "accept", content: { seq_2: "approve", seq_3: "approve" } } };
    const refused = await call({ requestState: altered, inputResponses: answers });
    expect(JSON.stringify(refused)).toMatch(/nothing was decided/);
    const garbage = await call({ requestState: "not-a-state", inputResponses: answers });
    expect(JSON.stringify(garbage)).toMatch(/not one this server made/);
    expect(served.calls.filter((call) => call.name === "delete-note")).toEqual([]);
    // The state as the server made it, with the answer: both deletes run.
    const done = await call({ requestState: first.requestState, inputResponses: answers });
    expect(done.structuredContent).toMatchObject({ status: "completed", result: ["deleted 1", "deleted 2"] });
  });

  it("R-AP-12: a signed state kept from an earlier pause decides nothing at the next one", async () => {
    const served = await serve(() => ({ action: "cancel" }));
    const call = (params: Record<string, unknown>) => rawCall(served.listener.url, DELETE_TWO, params);
    const first = await call({});
    const firstKey = Object.keys(first.inputRequests as object)[0] as string;
    const second = await call({
      requestState: first.requestState,
      inputResponses: { [firstKey]: { action: "accept", content: { seq_2: "approve" } } },
    });
    expect(second.resultType).toBe("input_required");
    const secondKey = Object.keys(second.inputRequests as object)[0] as string;
    expect(secondKey).not.toBe(firstKey);
    // The first state again, with an answer under the second question's key: nothing is decided.
    const stale = await call({
      requestState: first.requestState,
      inputResponses: { [secondKey]: { action: "accept", content: { seq_3: "approve" } } },
    });
    expect(JSON.stringify(stale)).toMatch(/no longer waits; nothing was decided/);
    expect(served.calls.filter((call) => call.name === "delete-note").map((call) => call.args)).toEqual([{ id: 1 }]);
  });
});
