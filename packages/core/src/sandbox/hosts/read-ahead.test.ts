/**
 * Reading a program ahead of its pass (`Executor.anticipate`, R-SB-8): a sandbox host told that a
 * pass of some code is coming reads it while the runtime stores the run, and the pass then runs
 * what was read, but only when its code is that very text. The server's rules are checked here
 * with an executor that shows what it was given; the wire with real sandbox processes.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { HostReply, PassRequest, PassResult } from "../executor.js";
import { EXECUTOR_FOR_TESTS } from "../pass-fixtures.js";
import { READ_AHEAD_MAX_CHARS } from "./host-protocol.js";
import { type HostedExecutor, PassServer } from "./pass-server.js";
import { createProcessExecutor, type ProcessExecutor } from "./process-host.js";

const ADD = "async () => (await math.add({ a: 1, b: 2 })).sum";
const TWICE = "async () => 2 * (await math.add({ a: 1, b: 2 })).sum";
const BROKEN = "async () => { return ( }";

/** A server whose executor records the requests it was given and answers at once. */
function serverRecording(): { server: PassServer; seen: PassRequest[] } {
  const seen: PassRequest[] = [];
  const executor: HostedExecutor = {
    async runPass(request) {
      seen.push(request);
      return { status: "returned", value: "1", logs: [] };
    },
    close: async () => undefined,
  };
  const server = new PassServer(executor, () => undefined, { closed: () => undefined });
  return { server, seen };
}

function passMessage(pass: number, code: string) {
  return { type: "pass" as const, pass, request: { code, connectors: {} } };
}

/** Lets the server's runPass calls happen (they start at once, but through a promise chain). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("read ahead: the pass server", () => {
  it("R-SB-8: the next pass of the expected code gets the program as read; its body is the one a pass would read", async () => {
    const { server, seen } = serverRecording();
    server.receive({ type: "expect", code: ADD });
    server.receive(passMessage(0, ADD));
    await settle();
    expect(seen[0]?.readAhead).toMatchObject({ ok: true });
    const read = seen[0]?.readAhead as Extract<PassRequest["readAhead"], { ok: true }>;
    expect(read.body).toContain("math.add");
  });

  it("R-SB-8: a pass of other code reads its own, and the expectation is gone after the next pass whatever it ran", async () => {
    const { server, seen } = serverRecording();
    server.receive({ type: "expect", code: ADD });
    server.receive(passMessage(0, TWICE));
    server.receive(passMessage(1, ADD));
    await settle();
    expect(seen.map((request) => request.readAhead)).toEqual([undefined, undefined]);
  });

  it("R-SB-8: a program too long to read ahead is not read, and one that does not parse is handed on as the failure it is", async () => {
    const { server, seen } = serverRecording();
    const long = `async () => 1 + ${"1 + ".repeat(READ_AHEAD_MAX_CHARS / 4)}1`;
    server.receive({ type: "expect", code: long });
    server.receive(passMessage(0, long));
    server.receive({ type: "expect", code: BROKEN });
    server.receive(passMessage(1, BROKEN));
    await settle();
    expect(seen[0]?.readAhead).toBeUndefined();
    expect(seen[1]?.readAhead).toMatchObject({ ok: false });
  });
});

describe(`read ahead: sandbox processes (${EXECUTOR_FOR_TESTS})`, () => {
  let executor: ProcessExecutor | undefined;
  afterEach(async () => {
    await executor?.close();
    executor = undefined;
  });

  async function run(code: string): Promise<PassResult> {
    return await (executor as ProcessExecutor).runPass({
      code,
      connectors: { math: ["add"] },
      onRequest: async (): Promise<HostReply> => ({ kind: "value", value: JSON.stringify({ sum: 3 }) }),
    });
  }

  it("R-SB-8: an anticipated program is read in its process and runs from there; another program still runs as its own", async () => {
    executor = createProcessExecutor({ engine: EXECUTOR_FOR_TESTS, processes: 1, timeoutMs: 5_000 });
    await executor.warm();
    executor.anticipate(ADD);
    expect(await run(ADD)).toMatchObject({ status: "returned", value: "3" });
    expect((await executor.stats()).passesReadAhead).toBe(1);

    // Expected one program, sent another: the pass runs what it was sent.
    executor.anticipate(ADD);
    expect(await run(TWICE)).toMatchObject({ status: "returned", value: "6" });
    executor.anticipate(BROKEN);
    expect(await run(BROKEN)).toMatchObject({ status: "failed", code: "SYNTAX_ERROR" });
    expect((await executor.stats()).passesReadAhead).toBe(2);
  });

  it("R-SB-8: a process running a pass is not asked to read ahead: the pass after it reads its program itself", async () => {
    executor = createProcessExecutor({ engine: EXECUTOR_FOR_TESTS, processes: 1, timeoutMs: 5_000 });
    await executor.warm();
    let asked: (answer: (reply: HostReply) => void) => void = () => undefined;
    const call = new Promise<(reply: HostReply) => void>((resolve) => (asked = resolve));
    const running = executor.runPass({
      code: ADD,
      connectors: { math: ["add"] },
      onRequest: () => new Promise<HostReply>((resolve) => asked(resolve)),
    });
    // The pass waits for its call's answer: its process runs it now.
    const answer = await call;
    executor.anticipate(TWICE);
    answer({ kind: "value", value: JSON.stringify({ sum: 3 }) });
    expect(await running).toMatchObject({ status: "returned", value: "3" });
    expect(await run(TWICE)).toMatchObject({ status: "returned", value: "6" });
    expect((await executor.stats()).passesReadAhead).toBe(0);
  });
});
