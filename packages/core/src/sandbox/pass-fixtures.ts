import { afterAll, expect } from "vitest";
import type { Executor, HostReply, PassRequest, PassResult, ReplayEntry, SandboxRequest } from "./executor.js";
import { valueCodec } from "./prelude/value-codec.js";

/**
 * For the executors' tests (isolated-vm-executor-*.test.ts, hostile-corpus-*.test.ts, …): runs
 * programs as passes and records what the host was asked. Not part of the package's API.
 */

/** The sandboxes the shared executor suites run against. */
export type ExecutorKind = "isolated-vm" | "quickjs";

/**
 * The executor the shared suites (isolated-vm-executor-*.test.ts, hostile-corpus-*.test.ts) run
 * against: `CODEMODE_EXECUTOR` (`isolated-vm` or `quickjs`), isolated-vm unless it is set, so CI
 * can run every suite on both. Anything else is refused, naming the variable.
 */
export const EXECUTOR_FOR_TESTS: ExecutorKind = executorKindFromEnvironment();

/** True when the suites run on QuickJS: where the engines genuinely differ, a test branches its expectation on it. */
export const onQuickJs = EXECUTOR_FOR_TESTS === "quickjs";

function executorKindFromEnvironment(): ExecutorKind {
  const value = process.env.CODEMODE_EXECUTOR?.trim().toLowerCase();
  if (value === undefined || value === "" || value === "isolated-vm") return "isolated-vm";
  if (value === "quickjs") return "quickjs";
  throw new TypeError(`CODEMODE_EXECUTOR must be isolated-vm or quickjs; got ${JSON.stringify(value)}`);
}

// Only the executor the suites run against is loaded: on QuickJS, isolated-vm may not load at all
// (Node 22, where the addon built for Node 24 cannot).
const createForTests: (options: { timeoutMs?: number; memoryMb?: number }) => Executor = onQuickJs
  ? (await import("./quickjs/index.js")).createQuickJsExecutor
  : (await import("./isolated-vm/isolated-vm-executor.js")).createIsolatedVmExecutor;

/** A new executor of the kind the suites run against (`EXECUTOR_FOR_TESTS`), with these limits. */
export function createExecutorForTests(options: { timeoutMs?: number; memoryMb?: number } = {}): Executor {
  return createForTests(options);
}

/** How a test's host answers a request. */
export type Answer = (request: SandboxRequest) => HostReply | Promise<HostReply>;

export interface RunOptions extends Partial<Omit<PassRequest, "code" | "onRequest">> {
  /** The host's answers; `echo` unless set. */
  answer?: Answer;
  /** Runs the pass somewhere else than on the runner's executor. */
  run?: (request: PassRequest) => Promise<PassResult>;
}

export interface Run {
  result: PassResult;
  requests: SandboxRequest[];
  /** The decoded result when the program returned. */
  value: unknown;
  /** onRequest calls that happened after runPass resolved (read it after waiting a little). */
  lateRequests: () => number;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const decodeArgs = (text: string): unknown => (text === "" ? null : valueCodec.decode(text));
export const encode = (value: unknown): string => valueCodec.encode(value) ?? "";

/** The host the runtime would be, reduced: a call echoes its seq and arguments; invalid requests halt. */
export const echo: Answer = (request) => {
  switch (request.type) {
    case "call":
      return {
        kind: "value",
        value: encode({
          seq: request.seq,
          connector: request.connector,
          method: request.method,
          args: decodeArgs(request.args),
        }),
      };
    case "step":
      return { kind: "value", value: "" };
    case "service":
      return { kind: "value", value: encode({ service: request.name, args: decodeArgs(request.args) }) };
    case "invalid":
      return { kind: "halt" };
  }
};

/** The log entry of a `github.get` call at `seq` with `args` that returned "" (undefined), for a pass's replay; `fields` change it. */
export function recordedCall(
  seq: number,
  args: unknown,
  fields: Partial<Extract<ReplayEntry, { kind: "call" }>>,
): ReplayEntry {
  const canonicalArgs = valueCodec.canonical(encode(args));
  return {
    kind: "call",
    seq,
    connector: "github",
    method: "get",
    canonicalArgs,
    outcome: "value",
    text: "",
    ...fields,
  };
}

/**
 * Runs each program as one pass on `executor`, with a `github` connector (`get`, `create_issue`)
 * and `deterministic`, unless the options say otherwise; the host answers with `echo`.
 *
 * @example
 * const run = passRunner(executor, { seed: "s", clockMs: 0 });
 * expectReturned(await run("async () => (await github.get({ id: 1 })).args.id")); // 1
 */
export function passRunner(
  executor: Executor,
  deterministic: PassRequest["deterministic"],
): (code: string, options?: RunOptions) => Promise<Run> {
  return async (code, options = {}) => {
    const requests: SandboxRequest[] = [];
    let ended = false;
    let late = 0;
    const answer = options.answer ?? echo;
    const request: PassRequest = {
      connectors: { github: ["get", "create_issue"] },
      deterministic,
      ...options,
      code,
      onRequest: async (sandboxRequest) => {
        if (ended) late++;
        requests.push(sandboxRequest);
        return answer(sandboxRequest);
      },
    };
    const result = await (options.run ?? ((passRequest) => executor.runPass(passRequest)))(request);
    ended = true;
    const value = result.status === "returned" && result.value !== "" ? valueCodec.decode(result.value) : undefined;
    return { result, requests, value, lateRequests: () => late };
  };
}

/**
 * For isolated-vm-executor-*.test.ts: the file's executor (of the kind `EXECUTOR_FOR_TESTS`, a
 * 5 s limit, closed after its tests) and a runner on it, deterministic with the seed
 * "execution-1" and the clock at 2024-01-02T03:04:05Z.
 */
export function isolatedVmExecutorForTests(): {
  executor: Executor;
  run: (code: string, options?: RunOptions) => Promise<Run>;
} {
  const executor = createExecutorForTests({ timeoutMs: 5_000 });
  afterAll(() => executor.close());
  return { executor, run: passRunner(executor, { seed: "execution-1", clockMs: Date.UTC(2024, 0, 2, 3, 4, 5) }) };
}

/** The decoded value of a pass that must have returned. */
export function expectReturned(outcome: Run): unknown {
  expect(outcome.result, JSON.stringify(outcome.result).slice(0, 500)).toMatchObject({ status: "returned" });
  return outcome.value;
}

/** The error message of a pass that must have failed with `code`, and with a message containing `containing` if given. */
export function expectFailed(outcome: Run, code: string, containing?: string): string {
  expect(outcome.result, JSON.stringify(outcome.result).slice(0, 500)).toMatchObject({ status: "failed", code });
  const error = outcome.result.status === "failed" ? outcome.result.error : "";
  if (containing !== undefined) expect(error).toContain(containing);
  return error;
}

/** The pass sent only an invalid request at seq 0 (its message containing `message`), and the host's halt ended it. */
export function expectHaltedOnInvalid(outcome: Run, message: string): void {
  expect(outcome.result.status).toBe("halted");
  expect(outcome.requests).toEqual([{ type: "invalid", seq: 0, message: expect.stringContaining(message) }]);
}

/** R-SB-1: a pass leaves a global and a poisoned prototype behind; the `passes` after it see neither. */
export async function expectFreshIsolates(
  executor: Executor,
  request: (code: string) => PassRequest,
  passes: number,
): Promise<void> {
  const first = await executor.runPass(
    request("globalThis.leaked = 'secret'; Object.prototype.poisoned = true; await tools.ping({}); typeof leaked"),
  );
  expect(first).toMatchObject({ status: "returned", value: '"string"' });
  for (let index = 0; index < passes; index++) {
    const next = await executor.runPass(request("[typeof leaked, ({}).poisoned === undefined, await tools.ping({})]"));
    expect(next).toMatchObject({ status: "returned", value: '["undefined",true,1]' });
  }
}

/** R-SB-3: a loop is a TIMEOUT, a memory bomb on a smaller heap a MEMORY_LIMIT, and the next pass runs. */
export async function expectLimitsHold(executor: Executor, request: (code: string) => PassRequest): Promise<void> {
  const loop = await executor.runPass({ ...request("while (true) {}"), timeoutMs: 300 });
  expect(loop).toMatchObject({ status: "failed", code: "TIMEOUT" });
  const bomb = await executor.runPass({
    ...request("const keep = []; while (true) keep.push(new Array(1e6).fill(7));"),
    memoryMb: 16,
  });
  expect(bomb).toMatchObject({ status: "failed", code: "MEMORY_LIMIT" });
  expect(await executor.runPass(request("6 * 7"))).toMatchObject({ status: "returned", value: "42" });
}
