import type { Connector, ToolDefinition } from "../connectors/define-connector.js";
import type { ArgsValidator } from "../connectors/validate-args.js";
import { checkDurableSize, decodeDurable, encodeDurable, MAX_DURABLE_CHARS } from "../log/durable-value.js";
import { ExecutionStore, type ExecutionHead, type StoredEntry } from "../log/execution-store.js";
import { CodemodeError, type ErrorCode } from "../outcome.js";
import type { Executor, HostReply, ReplayEntry, SandboxRequest } from "../sandbox/executor.js";
import { valueCodec } from "../sandbox/value-codec.js";
import { decideCall, decideStep, stepArgs, type RecordedCall } from "./decide.js";
import type { Discovery } from "./discovery.js";

export interface PassInput {
  /** Mutated: seqLimit grows as new calls are recorded. */
  head: ExecutionHead;
  code: string;
  /** Mutated: every entry this pass records lands here too. */
  log: Map<number, StoredEntry>;
  connectors: ReadonlyMap<string, Connector>;
  /** Argument validators by "connector.method" (R-CON-2); tools without a schema have none. */
  validators?: ReadonlyMap<string, ArgsValidator>;
  store: ExecutionStore;
  /** Answers codemode.search / describe / run; without it those are not installed. */
  discovery?: Discovery;
  executor: Executor;
  timeoutMs: number;
  memoryMb: number;
  allowNetwork: boolean;
  /**
   * R-ST-4 fencing: awaited before the head is rewritten mid-pass; rejects when this pass no
   * longer holds the execution's lease, so a host taken for gone never overwrites the record of
   * whoever ended the execution meanwhile.
   */
  confirmLease?: () => Promise<void>;
  /** Why the pass no longer owns the execution (its lease was lost), or undefined while it does. */
  leaseLost?: () => string | undefined;
}

export type PassEnd =
  | { kind: "completed"; resultText: string; logs: string[] }
  | { kind: "paused"; pendingSeq: number; logs: string[] }
  | { kind: "error"; code: ErrorCode; message: string; logs: string[] };

type Stop = { kind: "paused"; pendingSeq: number } | { kind: "error"; code: ErrorCode; message: string };

const HALT: HostReply = { kind: "halt" };
const SERVICES = ["search", "describe", "run"];
const HALT_PROMISE: Promise<HostReply> = Promise.resolve(HALT);

/**
 * One pass of an execution: runs the stored code in a fresh sandbox and answers each call by
 * the decision of `decideCall`. The first reason to stop (a pause, a divergence, a value that
 * cannot be kept, a store failure) is taken synchronously when the request arrives, so a call
 * the program issues after it is never run (R-RP-6); calls already running finish and are
 * recorded (R-RP-7).
 */
export async function runPass(input: PassInput): Promise<PassEnd> {
  const { head, log, store } = input;
  let stop: Stop | undefined;
  const usedSeqs = new Set<number>();
  let headWrite: Promise<void> = Promise.resolve();

  const halt = (reason: Stop): Promise<HostReply> => {
    // A store failure outranks a pause: the pause may not have been recorded.
    if (!stop || (reason.kind === "error" && reason.code === "STORAGE_ERROR" && stop.kind === "paused")) stop = reason;
    return HALT_PROMISE;
  };
  const failWith = (error: unknown): Promise<HostReply> => {
    if (CodemodeError.isInstance(error)) return halt({ kind: "error", code: error.code, message: error.message });
    return halt({ kind: "error", code: "SANDBOX_ERROR", message: error instanceof Error ? error.message : String(error) });
  };

  /** Writes an entry; a new seq beyond the head's limit raises the limit first, in order. */
  // The limit the stored head already has: an entry at or above it is invisible to a later
  // load until the head that raises the limit has landed, so it waits for that write.
  let storedSeqLimit = head.seqLimit;
  const record = (entry: StoredEntry): Promise<void> => {
    log.set(entry.seq, entry);
    // Writes land in the order the pass made them: a deferred result comes before anything after it.
    const earlier = deferredWrites.size > 0 ? Promise.all(deferredWrites) : undefined;
    if (entry.seq < storedSeqLimit) return earlier ? earlier.then(() => store.writeEntry(head.id, entry)) : store.writeEntry(head.id, entry);
    if (entry.seq < head.seqLimit) {
      // Another call is raising the limit right now: write after it.
      headWrite = headWrite.then(async () => {
        if (earlier) await earlier;
        await store.writeEntry(head.id, entry);
      });
      return headWrite;
    }
    head.seqLimit = ExecutionStore.seqLimitFor(entry.seq);
    const snapshot = { ...head };
    headWrite = headWrite.then(async () => {
      if (earlier) await earlier;
      await input.confirmLease?.();
      await store.writeHeadAndEntry(snapshot, entry);
      storedSeqLimit = Math.max(storedSeqLimit, snapshot.seqLimit);
    });
    return headWrite;
  };

  /**
   * Records a call's result without making the program wait for the store: the result goes to
   * the sandbox at once, and every later write of the pass (the next call's write-ahead, a pause,
   * a step) and the end of the pass wait for it. So no effect ever depends on a result that is
   * not durable yet, and a host that dies before it lands leaves the call `executing`, which
   * re-runs with the same idempotency key (R-RP-4).
   */
  const deferredWrites = new Set<Promise<void>>();
  const recordLater = (entry: StoredEntry): void => {
    const write = record(entry).catch((error: unknown) => {
      void failWith(error);
    });
    deferredWrites.add(write);
    void write.finally(() => deferredWrites.delete(write));
  };

  const claimSeq = (seq: number): boolean => {
    if (usedSeqs.has(seq)) return false;
    usedSeqs.add(seq);
    return true;
  };

  function onRequest(request: SandboxRequest): Promise<HostReply> {
    if (stop) return HALT_PROMISE;
    // R-ST-4: a host whose lease lapsed may have been taken for dead (expired, disposed): it
    // must not cause one more effect.
    const lost = input.leaseLost?.();
    if (lost) return halt({ kind: "error", code: "BUSY", message: lost });
    switch (request.type) {
      case "call":
        return handleCall(request);
      case "step":
        return handleStep(request);
      case "invalid":
        return halt({ kind: "error", code: "NOT_SERIALIZABLE", message: request.message });
      case "service":
        if (request.name === "fetch" && input.allowNetwork && request.seq !== undefined) return handleFetch(request.seq, request.args);
        return handleService(request.name, request.args);
    }
  }

  function handleCall(request: Extract<SandboxRequest, { type: "call" }>): Promise<HostReply> {
    const { seq, connector: connectorName, method } = request;
    if (!claimSeq(seq)) return halt({ kind: "error", code: "SANDBOX_ERROR", message: `seq ${seq} was used twice in one pass` });
    const tool = input.connectors.get(connectorName)?.tools[method] as ToolDefinition | undefined;
    if (!tool || !Object.hasOwn(input.connectors.get(connectorName)!.tools, method)) {
      return Promise.resolve({ kind: "error", message: `${connectorName}.${method} is not a configured tool` });
    }
    try {
      checkDurableSize(request.args, `the argument of ${connectorName}.${method}`);
    } catch (error) {
      return failWith(error);
    }
    let canonicalArgs: string;
    let args: unknown;
    try {
      canonicalArgs = request.args === "" ? "" : valueCodec.canonical(request.args);
      args = decodeDurable(request.args);
    } catch (error) {
      return halt({ kind: "error", code: "NOT_SERIALIZABLE", message: error instanceof Error ? error.message : String(error) });
    }
    const recorded = log.get(seq);
    // R-CON-2: a new call is checked before anything else, so nobody is asked to approve
    // arguments the tool would refuse. Schemas that only validate asynchronously are checked
    // in execute instead, since a pause must be decided synchronously (R-RP-6).
    let validated = false;
    const validator = input.validators?.get(`${connectorName}.${method}`);
    if (!recorded && validator) {
      const validation = validator(args);
      if (!(validation instanceof Promise)) {
        if (!validation.ok) return refuse({ seq, connector: connectorName, method, args: request.args, requiresApproval: false, state: "executing", startedAt: Date.now() }, validation.message);
        args = validation.value;
        validated = true;
      }
    }
    const decision = decideCall(
      { seq, connector: connectorName, method, canonicalArgs },
      recorded && toRecordedCall(recorded),
      {
        requiresApproval: resolveRequiresApproval(tool, args),
        reexecute: tool.replay === "reexecute",
        onInterrupted: tool.onInterrupted ?? "rerun",
      },
    );
    switch (decision.type) {
      case "diverge":
        return halt({ kind: "error", code: "REPLAY_DIVERGENCE", message: decision.message });
      case "replay":
        return Promise.resolve(
          decision.outcome === "value" ? { kind: "value", value: recorded!.result ?? "" } : { kind: "error", message: recorded!.error ?? "the call failed" },
        );
      case "pause": {
        halt({ kind: "paused", pendingSeq: seq });
        const entry: StoredEntry = recorded
          ? { ...recorded, state: "pending", requiresApproval: true }
          : { seq, connector: connectorName, method, args: request.args, requiresApproval: true, state: "pending", startedAt: Date.now() };
        delete entry.decision;
        return record(entry).then(() => HALT, failWith);
      }
      case "execute":
        return execute(tool, seq, connectorName, method, request.args, args, recorded, decision.reason, validated);
    }
  }

  async function execute(
    tool: ToolDefinition,
    seq: number,
    connectorName: string,
    method: string,
    argsText: string,
    args: unknown,
    recorded: StoredEntry | undefined,
    reason: "new" | "approved" | "reexecute" | "interrupted",
    validated: boolean,
  ): Promise<HostReply> {
    const ephemeral = tool.replay === "reexecute";
    const entry: StoredEntry = recorded
      ? { ...recorded, state: "executing" }
      : { seq, connector: connectorName, method, args: argsText, requiresApproval: false, state: "executing", startedAt: Date.now() };
    if (ephemeral) entry.ephemeral = true;
    try {
      // Write-ahead, so a host that dies mid-call leaves an `executing` entry (R-RP-4). An
      // ephemeral call already in the log just runs again: nothing about it changes.
      if (!(reason === "reexecute" && recorded)) await record(entry);
    } catch (error) {
      return failWith(error);
    }
    // A deferred write that failed meanwhile stopped the pass: run nothing that cannot be recorded.
    if (stop?.kind === "error" && stop.code === "STORAGE_ERROR") return HALT;
    const lost = input.leaseLost?.();
    if (lost) return halt({ kind: "error", code: "BUSY", message: lost });

    // R-CON-2: arguments are checked before execute; a mismatch rejects the call in the sandbox
    // and is recorded, so it replays as the same rejection.
    const validator = validated ? undefined : input.validators?.get(`${connectorName}.${method}`);
    if (validator) {
      const validation = await validator(args);
      if (!validation.ok) return refuse(entry, validation.message);
      args = validation.value;
    }
    const context = { executionId: head.id, seq, idempotencyKey: `${head.id}:${seq}`, connector: connectorName, method };
    let resultText: string;
    try {
      const result = await tool.execute(args as never, context);
      try {
        resultText = encodeDurable(result, `the result of ${connectorName}.${method}`);
      } catch (error) {
        // The effect happened; keep that in the log even though its result cannot be kept.
        const message = error instanceof Error ? error.message : String(error);
        await record({ ...entry, state: "applied", error: message, endedAt: Date.now() }).catch(() => undefined);
        return failWith(error);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      try {
        await record({ ...entry, state: "error", error: message, endedAt: Date.now() });
      } catch (storeError) {
        return failWith(storeError);
      }
      return { kind: "error", message };
    }
    if (ephemeral) {
      if (!(reason === "reexecute" && recorded)) recordLater({ ...entry, state: "applied", endedAt: Date.now() });
    } else {
      recordLater({ ...entry, state: "applied", result: resultText, endedAt: Date.now() });
    }
    return { kind: "value", value: resultText };
  }

  /** Records a refused call as an error entry, which replays as the same rejection. */
  async function refuse(entry: StoredEntry, message: string): Promise<HostReply> {
    try {
      await record({ ...entry, state: "error", error: message, endedAt: Date.now() });
    } catch (error) {
      return failWith(error);
    }
    return { kind: "error", message };
  }

  async function handleStep(request: Extract<SandboxRequest, { type: "step" }>): Promise<HostReply> {
    const { seq, name } = request;
    if (!claimSeq(seq)) return halt({ kind: "error", code: "SANDBOX_ERROR", message: `seq ${seq} was used twice in one pass` });
    const recorded = log.get(seq);
    const decision = decideStep(seq, name, recorded && toRecordedCall(recorded));
    if (decision.type === "diverge") return halt({ kind: "error", code: "REPLAY_DIVERGENCE", message: decision.message });
    if (decision.type === "replay") return { kind: "value", value: "" };
    try {
      if (request.value !== undefined) checkDurableSize(request.value, `the result of codemode.step("${name}")`);
    } catch (error) {
      return failWith(error);
    }
    const now = Date.now();
    const entry: StoredEntry = {
      seq,
      connector: "codemode",
      method: "step",
      args: stepArgs(name),
      requiresApproval: false,
      state: request.error === undefined ? "applied" : "error",
      seqAfter: request.seqAfter,
      startedAt: now,
      endedAt: now,
    };
    if (request.error === undefined) entry.result = request.value ?? "";
    else entry.error = request.error;
    try {
      await record(entry);
    } catch (error) {
      return failWith(error);
    }
    return { kind: "value", value: "" };
  }

  /**
   * R-SB-5: a host-run fetch, recorded like a step so it does not repeat during replay. The
   * response body is read as text and kept in the log, so it counts against the durable limit.
   */
  async function handleFetch(seq: number, argsText: string): Promise<HostReply> {
    if (!claimSeq(seq)) return halt({ kind: "error", code: "SANDBOX_ERROR", message: `seq ${seq} was used twice in one pass` });
    let canonicalArgs: string;
    let request: { input: string; init: { method?: unknown; headers?: unknown; body?: unknown } | null };
    try {
      canonicalArgs = valueCodec.canonical(argsText);
      request = decodeDurable(argsText) as typeof request;
    } catch (error) {
      return halt({ kind: "error", code: "NOT_SERIALIZABLE", message: error instanceof Error ? error.message : String(error) });
    }
    const recorded = log.get(seq);
    const decision = decideCall(
      { seq, connector: "codemode", method: "fetch", canonicalArgs },
      recorded && toRecordedCall(recorded),
      { requiresApproval: false, reexecute: false, onInterrupted: "rerun" },
    );
    if (decision.type === "diverge") return halt({ kind: "error", code: "REPLAY_DIVERGENCE", message: decision.message });
    if (decision.type === "replay") {
      return decision.outcome === "value" ? { kind: "value", value: recorded!.result ?? "" } : { kind: "error", message: recorded!.error ?? "fetch failed" };
    }
    const entry: StoredEntry = { seq, connector: "codemode", method: "fetch", args: argsText, requiresApproval: false, state: "executing", startedAt: Date.now() };
    try {
      await record(entry);
      const init = request.init ?? {};
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`no response within ${input.timeoutMs} ms`)), input.timeoutMs);
      let response: Response;
      let body: string;
      try {
        response = await fetch(String(request.input), {
          method: typeof init.method === "string" ? init.method : "GET",
          headers: (typeof init.headers === "object" && init.headers !== null ? init.headers : {}) as Record<string, string>,
          body: typeof init.body === "string" || init.body instanceof Uint8Array ? init.body : null,
          signal: abort.signal,
        });
        body = await readTextWithin(response, MAX_DURABLE_CHARS, abort, String(request.input));
      } finally {
        clearTimeout(timer);
      }
      const resultText = encodeDurable(
        { url: response.url, status: response.status, statusText: response.statusText, headers: Object.fromEntries(response.headers), body },
        `the response of fetch(${JSON.stringify(String(request.input)).slice(0, 100)})`,
      );
      await record({ ...entry, state: "applied", result: resultText, endedAt: Date.now() });
      return { kind: "value", value: resultText };
    } catch (error) {
      if (CodemodeError.isInstance(error)) return failWith(error);
      const message = `fetch failed: ${error instanceof Error ? error.message : String(error)}`;
      try {
        await record({ ...entry, state: "error", error: message, endedAt: Date.now() });
      } catch (storeError) {
        return failWith(storeError);
      }
      return { kind: "error", message };
    }
  }

  /** search / describe / run take no seq (R-RP-1): they read the catalogue, they record nothing. */
  async function handleService(name: string, argsText: string): Promise<HostReply> {
    const discovery = input.discovery;
    if (!discovery || !SERVICES.includes(name)) return { kind: "error", message: `codemode.${name} is not available in this runtime` };
    try {
      const args = decodeDurable(argsText);
      const first = Array.isArray(args) ? args[0] : args;
      const answer = name === "search" ? await discovery.search(first) : name === "describe" ? await discovery.describe(first) : await discovery.snippetBody(first);
      return { kind: "value", value: valueCodec.encode(answer) ?? "" };
    } catch (error) {
      return { kind: "error", message: `codemode.${name} failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  const result = await input.executor.runPass({
    code: input.code,
    connectors: Object.fromEntries([...input.connectors].map(([name, connector]) => [name, Object.keys(connector.tools)])),
    onRequest,
    services: input.discovery ? SERVICES : [],
    replay: replayEntries(log),
    deterministic: head.deterministic ? { seed: head.seed, clockMs: head.clockMs } : false,
    allowNetwork: input.allowNetwork,
    timeoutMs: input.timeoutMs,
    memoryMb: input.memoryMb,
  });
  await Promise.all(deferredWrites);
  await headWrite.catch(() => undefined);

  const finalStop = stop as Stop | undefined;
  if (finalStop?.kind === "error") return { kind: "error", code: finalStop.code, message: finalStop.message, logs: result.logs };
  if (finalStop?.kind === "paused") return { kind: "paused", pendingSeq: finalStop.pendingSeq, logs: result.logs };
  switch (result.status) {
    case "returned":
      return { kind: "completed", resultText: result.value, logs: result.logs };
    case "failed":
      return { kind: "error", code: result.code, message: result.error, logs: result.logs };
    case "halted":
      return { kind: "error", code: "SANDBOX_ERROR", message: "the pass was halted without a reason", logs: result.logs };
  }
}

/**
 * Reads a response body as text, stopping as soon as it passes what the log may keep: a huge
 * download must not be held in the host's memory only to be refused afterwards (R-DV-1).
 */
async function readTextWithin(response: Response, maxChars: number, abort: AbortController, url: string): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length > maxChars) {
      abort.abort();
      await reader.cancel().catch(() => undefined);
      throw new CodemodeError("VALUE_TOO_LARGE", `the response of fetch(${JSON.stringify(url).slice(0, 100)}) is over the ${maxChars.toLocaleString("en")}-character limit for values kept for replay: download it in a connector that stores it and returns a reference such as a path`);
    }
  }
  return text + decoder.decode();
}

function resolveRequiresApproval(tool: ToolDefinition, args: unknown): boolean {
  const rule = tool.requiresApproval;
  if (typeof rule !== "function") return rule === true;
  try {
    return rule(args as never) !== false;
  } catch {
    // A rule that cannot decide must not let a gated action through.
    return true;
  }
}

function toRecordedCall(entry: StoredEntry): RecordedCall {
  const recorded: RecordedCall = {
    connector: entry.connector,
    method: entry.method,
    canonicalArgs: canonicalOf(entry.args),
    state: entry.state,
  };
  if (entry.ephemeral) recorded.ephemeral = true;
  if (entry.decision?.approved) recorded.approved = true;
  return recorded;
}

function canonicalOf(argsText: string): string {
  if (argsText === "") return "";
  try {
    return valueCodec.canonical(argsText);
  } catch {
    return argsText;
  }
}

/**
 * Recorded text the sandbox may hold at once to answer replays itself. All of a long log's
 * results in the isolate's heap together could exceed its limit where the first pass, using one
 * result at a time, did not; calls beyond the budget are answered by the host one by one.
 */
const PRELOAD_BUDGET_CHARS = 8_000_000;

/** Recorded calls and steps the sandbox may answer itself (steps always: their fn is skipped). */
function replayEntries(log: Map<number, StoredEntry>): ReplayEntry[] {
  const entries: ReplayEntry[] = [];
  let budget = PRELOAD_BUDGET_CHARS;
  for (const entry of log.values()) {
    const isStep = entry.connector === "codemode" && entry.method === "step";
    if (isStep) {
      const name = (JSON.parse(entry.args) as { name: string }).name;
      if (entry.state === "applied") entries.push({ kind: "step", seq: entry.seq, name, seqAfter: entry.seqAfter ?? entry.seq + 1, outcome: "value", text: entry.result ?? "" });
      else if (entry.state === "error") entries.push({ kind: "step", seq: entry.seq, name, seqAfter: entry.seqAfter ?? entry.seq + 1, outcome: "error", text: entry.error ?? "the step failed" });
      continue;
    }
    if (entry.ephemeral) continue;
    // The sandbox compares the recorded text first and canonicalizes only when it differs.
    const size = entry.args.length + (entry.result?.length ?? entry.error?.length ?? 0);
    if (size > budget) continue;
    budget -= size;
    const base = { kind: "call" as const, seq: entry.seq, connector: entry.connector, method: entry.method, args: entry.args };
    if ((entry.state === "applied" || entry.state === "reverted") && entry.result !== undefined) entries.push({ ...base, outcome: "value", text: entry.result });
    else if (entry.state === "error") entries.push({ ...base, outcome: "error", text: entry.error ?? "the call failed" });
  }
  return entries;
}
