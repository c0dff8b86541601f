import type { ToolDefinition } from "../../connectors/define-connector.js";
import { errorMessage } from "../../error-message.js";
import { decodeDurable, MAX_DURABLE_CHARS, tooLarge } from "../../log/durable-value.js";
import type { ExecutionHead } from "../../log/interface.js";
import type { HostReply, PassRequest, PassResult, SandboxRequest } from "../../sandbox/executor.js";
import { valueCodec } from "../../sandbox/prelude/value-codec.js";
import type { RuntimeContext } from "../context/index.js";
import type { PassEnd, PassInput } from "../records/index.js";
import { replayEntries } from "../records/index.js";
import { fetchTool } from "./builtin-fetch.js";
import { CancelWatch, cancelMessage } from "./cancel-watch.js";
import { handleCall } from "./handle-call.js";
import { handleStep } from "./handle-step.js";
import { passDeterminism } from "./pass-randomness.js";
import { PassState, toolLookup } from "./pass-state.js";

/** The `codemode.*` services a pass answers: they read the catalogue and record nothing. */
export const SERVICES = ["search", "describe", "run"];

/**
 * One pass of an execution: runs the stored code in a fresh sandbox and answers each request.
 * Calls already running when the pass stops finish and are recorded (R-RP-7).
 */
export async function runPass(context: RuntimeContext, input: PassInput): Promise<PassEnd> {
  const watch = new CancelWatch(context.store, input.head.id, context.passesHere);
  try {
    // When the pass's time began: a pass that runs again runs within the same deadline.
    const first: { startedAt?: number } = {};
    let end = await runWatchedPass(context, input, watch, first);
    // Its sandbox process ended, and another pass there may have been the cause (R-SB-8): the
    // pass runs again from the log as it now stands, alone when it is one of several suspects,
    // so that a crash of its own is told from another's. It runs within its first deadline, so
    // that no pass, hostile or not, ends later than its time limit and the host's grace.
    for (
      let again = 0;
      end.kind === "error" && end.retry && again < MAX_CRASH_RETRIES && timeLeft(context, first);
      again++
    ) {
      context.warn(
        `execution ${input.head.id}: its sandbox process ended while the pass ran (${end.message}); the pass runs again${end.retry === "alone" ? " in a sandbox process of its own" : ""}`,
      );
      end = await runWatchedPass(context, input, watch, first, end.retry === "alone");
    }
    if (end.kind === "error" && end.retry) {
      const { retry: _retry, ...final } = end;
      return final;
    }
    return end;
  } finally {
    watch.end();
  }
}

/** How many times a pass runs again after sandbox processes it shared ended under it. */
const MAX_CRASH_RETRIES = 2;
/** Less time than this left before its deadline, a pass whose process crashed under it does not run again. */
const MIN_RETRY_MS = 50;

function timeLeft(context: RuntimeContext, first: { startedAt?: number }): boolean {
  if (first.startedAt === undefined) return true;
  return first.startedAt + context.settings.timeoutMs - Date.now() >= MIN_RETRY_MS;
}

async function runWatchedPass(
  context: RuntimeContext,
  input: PassInput,
  watch: CancelWatch,
  first: { startedAt?: number },
  alone = false,
): Promise<PassEnd> {
  const { head, log, lease } = input;
  const { settings } = context;
  const state = new PassState({
    store: context.store,
    head,
    log,
    lease,
    tools: passTools(context),
    validators: context.validators,
    resultValidators: context.resultValidators,
    limits: { maxLogBytes: settings.maxLogBytes, maxLogEntries: settings.maxLogEntries },
    approvals: {
      policy: context.approvalPolicy,
      timeoutMs: context.approvalPolicyTimeoutMs,
      runtime: settings.name,
      warn: context.warn,
    },
    signal: watch.signal,
    deadline: Date.now() + settings.timeoutMs,
  });

  const onRequest = (request: SandboxRequest): Promise<HostReply> => {
    if (state.stop || watch.request) return Promise.resolve({ kind: "halt" });
    // A call whose pause waits on an asynchronous argument check holds what comes after it (R-RP-6).
    if (state.held) return state.held.then(() => onRequest(request));
    // A pass whose process stalled past its lease asks the store before anything else.
    const leaseCheck = state.checkLease();
    if (leaseCheck) return leaseCheck.then((halted) => halted ?? (state.stop ? { kind: "halt" } : answer(request)));
    return answer(request);
  };
  const answer = (request: SandboxRequest): Promise<HostReply> =>
    routeRequest(request, settings.allowNetwork, {
      call: (call) => handleCall(state, call),
      step: (step) => handleStep(state, step),
      // With a size, the sandbox kept a value over the durable limit to itself (R-DV-1).
      invalid: (invalid) =>
        invalid.size !== undefined
          ? state.failWith(tooLarge(invalid.message, invalid.size))
          : state.halt({ kind: "error", code: "NOT_SERIALIZABLE", message: invalid.message }),
      service: (name, args) => answerService(context, name, args),
    });

  const result = await runInSandbox(context, head, {
    code: input.code,
    onRequest: context.telemetry.observeRequests(head, log, onRequest),
    replay: replayEntries(log),
    signal: watch.signal,
    ...(alone ? { alone } : {}),
    ...(first.startedAt === undefined ? {} : { startedAt: first.startedAt }),
    // The tool calls' deadline is the sandbox's own, counted from the same instant (R-SB-3).
    started: (startedAt) => {
      first.startedAt ??= startedAt;
      state.deadline = startedAt + settings.timeoutMs;
    },
  });
  await state.recorder.drain();

  // A cancel that came while the pass ran ends the run, unless the program had returned by then.
  if (watch.request && result.status !== "returned")
    return {
      kind: "cancelled",
      message: cancelMessage(watch.request),
      pendingSeqs: [...state.pending],
      logs: result.logs,
    };

  const stop = state.stop;
  if (stop) {
    const divergence = stop.divergence ? { divergence: stop.divergence } : {};
    return { kind: "error", code: stop.code, message: stop.message, logs: result.logs, ...divergence };
  }
  // Calls that wait for a person decide the pass, whatever the program did after them (R-AP-8):
  // once they are decided, the next pass replays up to them and goes on from there.
  if (state.pending.length > 0) return { kind: "paused", pendingSeqs: [...state.pending], logs: result.logs };
  switch (result.status) {
    case "returned":
      return { kind: "completed", resultText: result.value, logs: result.logs };
    case "failed": {
      const retry = result.crash?.retry;
      return {
        kind: "error",
        code: result.code,
        message: result.error,
        logs: result.logs,
        ...(retry ? { retry } : {}),
      };
    }
    case "denied":
      return { kind: "denied", message: result.error, logs: result.logs };
    case "halted":
      return {
        kind: "error",
        code: "SANDBOX_ERROR",
        message: "the pass was halted without a reason",
        logs: result.logs,
      };
  }
}

type Request<T extends SandboxRequest["type"]> = Extract<SandboxRequest, { type: T }>;

/** What a pass (or a replay check) does with each kind of request its sandbox sends. */
export interface RequestHandlers {
  call(request: Request<"call">): Promise<HostReply> | HostReply;
  step(request: Request<"step">): Promise<HostReply> | HostReply;
  invalid(request: Request<"invalid">): Promise<HostReply> | HostReply;
  service(name: string, args: string): Promise<HostReply> | HostReply;
}

/**
 * The one dispatcher of a sandbox's requests: each goes to its handler, and the built-in `fetch`
 * (a service the sandbox numbers like a call) is a call of `codemode.fetch` where the network is
 * allowed, so it is logged and replayed as any call.
 */
export async function routeRequest(
  request: SandboxRequest,
  fetchIsCall: boolean,
  handlers: RequestHandlers,
): Promise<HostReply> {
  switch (request.type) {
    case "call":
      return handlers.call(request);
    case "step":
      return handlers.step(request);
    case "invalid":
      return handlers.invalid(request);
    case "service":
      if (request.name === "fetch" && fetchIsCall && request.seq !== undefined)
        return handlers.call({
          type: "call",
          seq: request.seq,
          connector: "codemode",
          method: "fetch",
          args: request.args,
        });
      return handlers.service(request.name, request.args);
  }
}

/** One lookup per runtime: its connectors and settings do not change, and a listing asks per action. */
const toolLookups = new WeakMap<RuntimeContext, (connector: string, method: string) => ToolDefinition | undefined>();

/** The tools a pass may call: the configured connectors, plus `fetch` when the network is allowed. */
export function passTools(context: RuntimeContext): (connector: string, method: string) => ToolDefinition | undefined {
  let lookup = toolLookups.get(context);
  if (!lookup) {
    const builtIn = new Map<string, ToolDefinition>();
    if (context.settings.allowNetwork) builtIn.set("fetch", fetchTool(context.settings.timeoutMs));
    lookup = toolLookup(context.connectors, builtIn);
    toolLookups.set(context, lookup);
  }
  return lookup;
}

/**
 * Runs `code` in the executor as a pass of `head` (its replay-stable clock and randomness, the
 * runtime's limits), once admitted. Back-pressure: beyond `maxPassesInFlight`, it waits here,
 * before any sandbox exists (holding the execution's lease, when the caller has one).
 */
export async function runInSandbox(
  context: RuntimeContext,
  head: ExecutionHead,
  run: Pick<PassRequest, "code" | "onRequest" | "replay" | "signal" | "alone" | "started" | "startedAt">,
): Promise<PassResult> {
  const { settings } = context;
  const admission = await context.passes.admit();
  context.telemetry.passAdmitted(head, admission);
  try {
    return await context.executor.runPass({
      ...run,
      connectors: sandboxGlobals(context, head),
      services: SERVICES,
      deterministic: passDeterminism(head),
      allowNetwork: settings.allowNetwork,
      timeoutMs: settings.timeoutMs,
      memoryMb: settings.memoryMb,
      maxValueChars: MAX_DURABLE_CHARS,
      // A warm isolate serves passes of this runtime only, never another's.
      partition: context.partition,
    });
  } finally {
    admission.release();
  }
}

/**
 * The connectors' methods a pass's program sees: those programs may call, and, in a direct call's
 * run (`runtime.callTool`), the one tool it calls.
 */
function sandboxGlobals(context: RuntimeContext, head: ExecutionHead): Record<string, string[]> {
  const globals = Object.fromEntries(
    [...context.codeConnectors].map(([name, connector]) => [name, Object.keys(connector.tools)]),
  );
  const direct = head.direct === undefined ? undefined : splitToolPath(head.direct);
  if (direct && context.connectors.get(direct.connector)?.tools[direct.method]) {
    const methods = globals[direct.connector] ?? [];
    if (!methods.includes(direct.method)) globals[direct.connector] = [...methods, direct.method];
  }
  return globals;
}

/** "connector.method" as its two names; undefined for a path without a connector. */
export function splitToolPath(path: string): { connector: string; method: string } | undefined {
  const dot = path.indexOf(".");
  return dot <= 0 ? undefined : { connector: path.slice(0, dot), method: path.slice(dot + 1) };
}

/** search / describe / run take no seq (R-RP-1): they read the catalogue, they record nothing. */
export async function answerService(context: RuntimeContext, name: string, argsText: string): Promise<HostReply> {
  if (!SERVICES.includes(name)) return { kind: "error", message: `codemode.${name} is not available in this runtime` };
  try {
    const args = decodeDurable(argsText);
    const first = Array.isArray(args) ? args[0] : args;
    const { discovery } = context;
    const answer =
      name === "search"
        ? await discovery.search(first)
        : name === "describe"
          ? await discovery.describe(first)
          : await discovery.snippetSource(first);
    return { kind: "value", value: valueCodec.encode(answer) ?? "" };
  } catch (error) {
    return { kind: "error", message: `codemode.${name} failed: ${errorMessage(error)}` };
  }
}
