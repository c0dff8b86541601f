import type { ToolDefinition } from "../../connectors/define-connector.js";
import { errorMessage } from "../../error-message.js";
import { decodeDurable } from "../../log/durable-value.js";
import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import type { Divergence, ErrorCode, ExecutionStatus } from "../../outcome.js";
import type { HostReply, SandboxRequest } from "../../sandbox/executor.js";
import { valueCodec } from "../../sandbox/prelude/value-codec.js";
import type { RuntimeContext } from "../context/index.js";
import {
  answerService,
  deniedReply,
  divergentCall,
  passTools,
  planCall,
  planStep,
  routeRequest,
  runInSandbox,
  toRecordedCall,
  withMessage,
} from "../passes/index.js";
import { replayEntries } from "../records/index.js";
import { checkRunQuery, type RunQuery, readStore, selectRuns } from "./select-runs.js";

/** Which stored runs `replayCheck` takes, newest first. */
export interface ReplayCheckQuery extends RunQuery {
  /** Default `"paused"`: the runs an approval will replay. */
  status?: ExecutionStatus | readonly ExecutionStatus[];
}

/** How one stored run fared against the current code, connectors, tools and schemas. */
export interface ReplayCheckResult {
  executionId: string;
  /** Its status in the store; absent when there is no such execution. */
  status?: ExecutionStatus;
  /** True when the program replays its whole record without a divergence. */
  ok: boolean;
  /** Recorded connector calls the program reached and matched (replayed steps are not counted). */
  replayed: number;
  /**
   * Where the check stopped: `end` (the program returned or threw), `frontier` (the first call the
   * record has no result for: the pending one, or a new one), `reexecute` (a `replay: "reexecute"`
   * call, which a check never runs), `divergence`, or `error` (the check could not run).
   */
  stoppedAt: "end" | "frontier" | "reexecute" | "divergence" | "error";
  /** The first divergence, recorded against now. */
  divergence?: Divergence;
  /** Why the check could not run: an unknown execution (NOT_FOUND), a pass limit, a syntax error… */
  error?: { code: ErrorCode; message: string };
}

export interface ReplayCheckReport {
  /** True when every run checked is `ok`. */
  ok: boolean;
  results: ReplayCheckResult[];
}

/**
 * Runs stored code against its recorded log with the current connectors, tools and schemas and
 * never calls a tool: every recorded call is answered from the log, the first call the log has no
 * result for ends the check. Reads only; nothing in the store changes. A store failure rejects
 * with STORAGE_ERROR (R-RT-3); an unknown execution is a result with code NOT_FOUND.
 */
export async function replayCheck(
  context: RuntimeContext,
  target: string | ReplayCheckQuery = {},
): Promise<ReplayCheckReport> {
  const heads: Array<ExecutionHead | string> =
    typeof target === "string"
      ? [(await readStore(`could not read execution ${target}`, () => context.store.readHead(target))) ?? target]
      : await selectRuns(context, checkRunQuery("replayCheck", target, "paused"));
  const results: ReplayCheckResult[] = [];
  for (const head of heads) results.push(await checkOne(context, head));
  return { ok: results.every((result) => result.ok), results };
}

/** What one dry pass found: the first divergence, how far it got and how it stopped. */
interface DryPass {
  replayed: number;
  issued: Set<number>;
  stop?: { at: "frontier" | "reexecute" } | { at: "divergence"; divergence: Divergence };
  /** A recorded call still waits for a person: the program went on past it, as its passes do (R-AP-8). */
  waiting?: boolean;
}

async function checkOne(context: RuntimeContext, target: ExecutionHead | string): Promise<ReplayCheckResult> {
  if (typeof target === "string")
    return {
      executionId: target,
      ok: false,
      replayed: 0,
      stoppedAt: "error",
      error: { code: "NOT_FOUND", message: `there is no execution ${target}` },
    };
  const head = target;
  const { code, log } = await readStore(`could not read execution ${head.id}`, () =>
    context.store.readCodeAndLog(head),
  );
  const base = { executionId: head.id, status: head.status };
  const tools = passTools(context);
  const staticDivergence = await firstStaticDivergence(context, log, tools);
  const dry: DryPass = { replayed: 0, issued: new Set() };
  const stopWith = (stop: NonNullable<DryPass["stop"]>): HostReply => {
    dry.stop ??= stop;
    return { kind: "halt" };
  };
  const onRequest = async (request: SandboxRequest): Promise<HostReply> => {
    if (dry.stop) return { kind: "halt" };
    // The same routing as a pass's: recorded `fetch` calls are compared as calls, whatever the network setting now.
    return routeRequest(request, true, {
      call: (call) => answerCall(log, tools, dry, stopWith, call),
      step: (step) => {
        dry.issued.add(step.seq);
        const recorded = log.get(step.seq);
        const decision = planStep(step.seq, step.name, recorded && toRecordedCall(recorded));
        if (decision.type === "diverge") return stopWith({ at: "divergence", divergence: decision.divergence });
        if (decision.type !== "replay") return stopWith({ at: "frontier" });
        dry.replayed += 1;
        return { kind: "value", value: "" };
      },
      invalid: (invalid) => ({ kind: "error", message: invalid.message }),
      service: (name, args) => answerService(context, name, args),
    });
  };
  const result = await runInSandbox(context, head, {
    code,
    onRequest,
    // Steps only: every recorded call comes to the host, which compares it and counts it.
    replay: replayEntries(log).filter((entry) => entry.kind === "step"),
  });
  const { replayed } = dry;
  // The program ended by itself (returned, or threw): a recorded call it never reached is a divergence.
  const ended =
    !dry.stop &&
    (result.status === "returned" ||
      result.status === "denied" ||
      (result.status === "failed" && (result.code === "PROGRAM_ERROR" || result.code === "SANDBOX_ERROR")));
  const divergence = earliest(
    staticDivergence,
    dry.stop?.at === "divergence" ? dry.stop.divergence : undefined,
    ended ? endedEarly(log, dry.issued) : undefined,
  );
  if (divergence) return { ...base, ok: false, replayed, stoppedAt: "divergence", divergence };
  if (dry.stop) return { ...base, ok: true, replayed, stoppedAt: dry.stop.at };
  if (dry.waiting) return { ...base, ok: true, replayed, stoppedAt: "frontier" };
  if (!ended) {
    const error =
      result.status === "failed"
        ? { code: result.code, message: result.error }
        : { code: "SANDBOX_ERROR" as const, message: "the check's pass was halted without a reason" };
    return { ...base, ok: false, replayed, stoppedAt: "error", error };
  }
  return { ...base, ok: true, replayed, stoppedAt: "end" };
}

type CallRequest = { seq: number; connector: string; method: string; args: string };

function answerCall(
  log: ReadonlyMap<number, StoredEntry>,
  tools: (connector: string, method: string) => ToolDefinition | undefined,
  dry: DryPass,
  stopWith: (stop: NonNullable<DryPass["stop"]>) => HostReply,
  request: CallRequest,
): HostReply {
  const { seq, connector, method } = request;
  dry.issued.add(seq);
  const recorded = log.get(seq);
  const tool = tools(connector, method);
  if (!tool) {
    if (!recorded) return { kind: "error", message: `${connector}.${method} is not a configured tool` };
    const divergence = withMessage({
      seq,
      kind: "missing-tool",
      recorded: divergentCall(recorded.connector, recorded.method, recorded.args),
      now: divergentCall(connector, method, request.args),
    });
    return stopWith({ at: "divergence", divergence });
  }
  if (!recorded) return stopWith({ at: "frontier" });
  let canonicalArgs = "";
  try {
    if (request.args !== "") canonicalArgs = valueCodec.canonical(request.args);
  } catch (error) {
    return { kind: "error", message: errorMessage(error) };
  }
  const decision = planCall({ seq, connector, method, canonicalArgs }, toRecordedCall(recorded), {
    requiresApproval: false,
    reexecute: tool.replay === "reexecute",
    onInterrupted: tool.onInterrupted ?? "rerun",
  });
  switch (decision.type) {
    case "diverge":
      return stopWith({ at: "divergence", divergence: decision.divergence });
    case "replay":
      dry.replayed += 1;
      if (decision.outcome === "denied") return deniedReply(recorded);
      return decision.outcome === "value"
        ? { kind: "value", value: recorded.result ?? "" }
        : { kind: "error", message: recorded.error ?? "the call failed" };
    case "execute":
      return stopWith({ at: decision.reason === "reexecute" ? "reexecute" : "frontier" });
    case "pause":
      // It never answers, and the program goes on, so calls recorded after it are checked too.
      dry.waiting = true;
      return { kind: "wait" };
  }
}

/**
 * Divergences the log shows without running the code, at the seq of each recorded call: a
 * connector or method that is not configured any more, or a schema that refuses the recorded
 * arguments. The first one by seq.
 */
async function firstStaticDivergence(
  context: RuntimeContext,
  log: ReadonlyMap<number, StoredEntry>,
  tools: (connector: string, method: string) => ToolDefinition | undefined,
): Promise<Divergence | undefined> {
  const entries = [...log.values()].sort((a, b) => a.seq - b.seq);
  for (const entry of entries) {
    if (entry.connector === "codemode" && entry.method === "step") continue;
    const recorded = divergentCall(entry.connector, entry.method, entry.args);
    if (!tools(entry.connector, entry.method)) return withMessage({ seq: entry.seq, kind: "missing-tool", recorded });
    const validator = context.validators.get(`${entry.connector}.${entry.method}`);
    if (!validator) continue;
    let refusal: string | undefined;
    try {
      const validation = await validator(decodeDurable(entry.args));
      if (!validation.ok) refusal = validation.message;
    } catch (error) {
      refusal = `the schema threw: ${errorMessage(error)}`;
    }
    if (refusal !== undefined) return withMessage({ seq: entry.seq, kind: "schema", recorded, schemaError: refusal });
  }
  return undefined;
}

/** A recorded call the program, having ended, never reached (calls inside a replayed step are skipped, not missed). */
function endedEarly(log: ReadonlyMap<number, StoredEntry>, issued: ReadonlySet<number>): Divergence | undefined {
  const skipped = new Set<number>();
  for (const entry of log.values())
    if (entry.connector === "codemode" && entry.method === "step")
      for (let seq = entry.seq; seq < (entry.seqAfter ?? entry.seq + 1); seq++) skipped.add(seq);
  const missed = [...log.values()]
    .filter((entry) => !issued.has(entry.seq) && !skipped.has(entry.seq))
    .sort((a, b) => a.seq - b.seq)[0];
  if (!missed) return undefined;
  return withMessage({
    seq: missed.seq,
    kind: "ended",
    recorded: divergentCall(missed.connector, missed.method, missed.args),
  });
}

function earliest(...found: Array<Divergence | undefined>): Divergence | undefined {
  return found.filter((item) => item !== undefined).sort((a, b) => a.seq - b.seq)[0];
}
