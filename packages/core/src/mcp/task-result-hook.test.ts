import { describe, expect, it } from "vitest";
import { TASKS_EXTENSION } from "./protocol-names.js";
import { expectTaskAnswer } from "./task-result-hook.js";

const CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** A transport as SDK 2's `Protocol` leaves it once connected: `send`, and an `onmessage` it set. */
function connectedClient() {
  const sent: unknown[] = [];
  const received: unknown[] = [];
  const transport = {
    send: async (message: unknown) => void sent.push(message),
    onmessage: (message: unknown) => void received.push(message),
  };
  return { client: { transport }, transport, sent, received };
}

const call = (id: number, meta: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "build", arguments: {}, _meta: { [CAPABILITIES]: { elicitation: {} }, ...meta } },
});

describe("expectTaskAnswer (issue 43: SEP-2663 tasks through an SDK 2 client)", () => {
  it("the connector's call declares the extension beside the client's capabilities, and its mark never goes out", async () => {
    const { client, transport, sent } = connectedClient();
    const expected = expectTaskAnswer(client)!;
    await transport.send(call(7, { ...expected.meta, "codemode/idempotencyKey": "run:0" }));
    expect(sent).toEqual([
      call(7, {
        [CAPABILITIES]: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
        "codemode/idempotencyKey": "run:0",
      }),
    ]);
  });

  it("takes the task answer aside and hands the SDK a result it accepts; a plain answer passes as it is", () => {
    const { client, transport, received } = connectedClient();
    const first = expectTaskAnswer(client)!;
    const second = expectTaskAnswer(client)!;
    void transport.send(call(1, first.meta));
    void transport.send(call(2, second.meta));
    const task = { resultType: "task", taskId: "t-1", status: "working" };
    transport.onmessage({ jsonrpc: "2.0", id: 1, result: task });
    transport.onmessage({ jsonrpc: "2.0", id: 2, result: { content: [], resultType: "complete" } });
    expect(first.task()).toEqual(task);
    expect(second.task()).toBeUndefined();
    expect(received).toEqual([
      { jsonrpc: "2.0", id: 1, result: { content: [], isError: true, resultType: "complete" } },
      { jsonrpc: "2.0", id: 2, result: { content: [], resultType: "complete" } },
    ]);
  });

  it("leaves every other message alone: the application's own calls are not declared and their answers not touched", () => {
    const { client, transport, sent, received } = connectedClient();
    expectTaskAnswer(client);
    const own = call(3, {});
    void transport.send(own);
    const answer = { jsonrpc: "2.0", id: 3, result: { resultType: "task", taskId: "t-2" } };
    transport.onmessage(answer);
    expect(sent).toEqual([own]);
    expect(received).toEqual([answer]);
  });

  it("hooks the transport again after the client set a new onmessage (a reconnect)", () => {
    const { client, transport } = connectedClient();
    expectTaskAnswer(client);
    const later: unknown[] = [];
    transport.onmessage = (message) => void later.push(message);
    const expected = expectTaskAnswer(client)!;
    void transport.send(call(9, expected.meta));
    transport.onmessage({ jsonrpc: "2.0", id: 9, result: { resultType: "task", taskId: "t-3" } });
    expect(expected.task()).toMatchObject({ taskId: "t-3" });
    expect(later).toHaveLength(1);
  });

  it("answers undefined for a client it cannot hook (no transport, or a frozen one)", () => {
    expect(expectTaskAnswer({})).toBeUndefined();
    expect(expectTaskAnswer({ transport: Object.freeze({ send: async () => undefined }) })).toBeUndefined();
  });
});
