import { callNeedsApproval, codeMayCall, type ToolDefinition } from "../../connectors/define-connector.js";
import type { ArgsValidation } from "../../connectors/validate-args.js";
import { errorMessage } from "../../error-message.js";
import { checkDurableSize, clipMessage, decodeDurable, encodeDurable } from "../../log/durable-value.js";
import type { StoredEntry } from "../../log/interface.js";
import { type ApprovalDecision, CodemodeError } from "../../outcome.js";
import type { HostReply, SandboxRequest } from "../../sandbox/executor.js";
import { valueCodec } from "../../sandbox/prelude/value-codec.js";
import { deniedReply, type GatedCall, gateCall } from "./approval-gate.js";
import { planCall, type RecordedCall } from "./call-plan.js";
import { HALT, type PassState } from "./pass-state.js";
import { protoKeyMessage, protoKeyPath } from "./proto-keys.js";

type CallRequest = Extract<SandboxRequest, { type: "call" }>;
type ExecuteReason = "new" | "approved" | "reexecute" | "interrupted";

/** A call as the host understood it: checked, decoded, and (when new) validated. */
interface CheckedCall {
  seq: number;
  connector: string;
  method: string;
  tool: ToolDefinition;
  argsText: string;
  /** Key-sorted wire text of the arguments, compared with the record's (R-RP-2); "" for a new call. */
  canonicalArgs: string;
  args: unknown;
  recorded: StoredEntry | undefined;
  /** Whether `args` already went through the tool's schema (R-CON-2). */
  validated: boolean;
}

/**
 * What happens to one connector call (built-in `fetch` included): checked as hostile input,
 * validated when new, then answered by the decision of `planCall` — replay the record, pause
 * for approval, diverge, or execute with a write-ahead entry (R-RP-4).
 */
export function handleCall(pass: PassState, request: CallRequest): Promise<HostReply> {
  const { seq, connector, method } = request;
  const reused = pass.claimSeq(seq);
  if (reused) return reused;
  const tool = pass.tools(connector, method);
  if (!tool) return Promise.resolve({ kind: "error", message: `${connector}.${method} is not a configured tool` });
  // R-CN-OA: a tool only the model calls runs in its own direct call's run, never from a program.
  if (!codeMayCall(tool) && pass.head.direct !== `${connector}.${method}`)
    return Promise.resolve({
      kind: "error",
      message: `${connector}.${method} is called by the model directly, not from a program (its callers are ${JSON.stringify(tool.callers)})`,
    });
  // A new call writes an entry whatever comes of it: within the execution's write quota only.
  const overQuota = pass.log.has(seq) ? undefined : pass.budget.refusal(Buffer.byteLength(request.args));
  if (overQuota) return pass.failWith(overQuota);
  const recorded = pass.log.get(seq);
  let canonicalArgs = "";
  let args: unknown;
  try {
    checkDurableSize(request.args, `the argument of ${connector}.${method}`);
    // Only a call already in the log is compared (R-RP-2): a new one skips the key-sorted copy.
    if (recorded && request.args !== "") canonicalArgs = valueCodec.canonical(request.args);
    args = decodeDurable(request.args);
  } catch (error) {
    if (CodemodeError.isInstance(error)) return pass.failWith(error);
    return pass.halt({ kind: "error", code: "NOT_SERIALIZABLE", message: errorMessage(error) });
  }
  const call: CheckedCall = {
    seq,
    connector,
    method,
    tool,
    argsText: request.args,
    canonicalArgs,
    args,
    recorded,
    validated: false,
  };
  if (!call.recorded) {
    const protoKey = protoKeyPath(request.args, args);
    if (protoKey !== undefined)
      return refuse(pass, newEntry(call, "executing"), protoKeyMessage(connector, method, protoKey));
  }
  // R-CON-2: a new call is checked before anything else, so nobody is asked to approve arguments
  // the tool would refuse, and the approval rule sees exactly what execute will get.
  const validator = pass.validators.get(`${connector}.${method}`);
  if (!call.recorded && validator) {
    const validation = validator(args);
    if (validation instanceof Promise) {
      // A tool that never pauses is checked in execute, concurrently with later calls.
      if (mayPause(tool)) return decideAfter(pass, call, validation);
    } else {
      if (!validation.ok) return refuse(pass, newEntry(call, "executing"), validation.message);
      call.args = validation.value;
      call.validated = true;
    }
  }
  return decide(pass, call);
}

/**
 * An asynchronous schema (zod `.refine(async …)`) answers later, and whether the call pauses
 * depends on its output: the approval rule must never see raw arguments that `execute` would
 * get parsed (`{ amount: "1,000,000" }` once went through unapproved). Requests the program
 * issues meanwhile wait (`PassState.holdRequests`), so that none runs if this call pauses (R-RP-6).
 */
function decideAfter(pass: PassState, call: CheckedCall, validation: Promise<ArgsValidation>): Promise<HostReply> {
  const release = pass.holdRequests();
  const settle = (result: ArgsValidation): Promise<HostReply> => {
    try {
      if (!result.ok) return refuse(pass, newEntry(call, "executing"), result.message);
      call.args = result.value;
      call.validated = true;
      // Synchronously up to the pause (which stops the pass) or the write-ahead, then release.
      return decide(pass, call);
    } finally {
      release();
    }
  };
  return validation.then(settle, (error: unknown) =>
    settle({
      ok: false,
      message: `Could not check the arguments of ${call.connector}.${call.method}: ${errorMessage(error)}`,
    }),
  );
}

/** The decision of `planCall` for a checked call, and what the pass does about it. */
function decide(pass: PassState, call: CheckedCall): Promise<HostReply> {
  const { seq, connector, method, canonicalArgs, tool } = call;
  const decision = planCall({ seq, connector, method, canonicalArgs }, call.recorded && toRecordedCall(call.recorded), {
    requiresApproval: callNeedsApproval(tool, call.args),
    reexecute: tool.replay === "reexecute",
    onInterrupted: tool.onInterrupted ?? "rerun",
  });
  switch (decision.type) {
    case "diverge":
      return pass.halt({
        kind: "error",
        code: "REPLAY_DIVERGENCE",
        message: decision.divergence.message,
        divergence: decision.divergence,
      });
    case "replay": {
      const recorded = call.recorded as StoredEntry;
      if (decision.outcome === "denied") return Promise.resolve(deniedReply(recorded));
      return Promise.resolve(
        decision.outcome === "value"
          ? { kind: "value", value: recorded.result ?? "" }
          : { kind: "error", message: recorded.error ?? "the call failed" },
      );
    }
    case "pause":
      return gateCall(pass, gated(call), (approved) => execute(pass, call, "approved", approved));
    case "execute":
      return execute(pass, call, decision.reason);
  }
}

/** The call as the approval gate sees it. */
function gated(call: CheckedCall): GatedCall {
  return {
    seq: call.seq,
    connector: call.connector,
    method: call.method,
    args: call.args,
    description: typeof call.tool.description === "string" ? call.tool.description : undefined,
    recorded: call.recorded,
    fresh: (state) => newEntry(call, state),
  };
}

function mayPause(tool: ToolDefinition): boolean {
  return tool.requiresApproval === true || typeof tool.requiresApproval === "function";
}

/** Runs a call with a write-ahead entry; `decision` (a grant's, the policy's) is recorded on it. */
async function execute(
  pass: PassState,
  call: CheckedCall,
  reason: ExecuteReason,
  decision?: ApprovalDecision,
): Promise<HostReply> {
  const { tool, recorded } = call;
  const ephemeral = tool.replay === "reexecute";
  const entry: StoredEntry = recorded ? { ...recorded, state: "executing" } : newEntry(call, "executing");
  if (ephemeral) entry.ephemeral = true;
  if (decision) {
    entry.decision = decision;
    entry.requiresApproval = true;
  }
  const rerunEphemeral = reason === "reexecute" && recorded !== undefined;
  // Write-ahead, so a host that dies mid-call leaves an `executing` entry (R-RP-4). An ephemeral
  // call already in the log just runs again: nothing about it changes. A new call of a read-only
  // tool needs none: if the host dies before its result is recorded, running it again is harmless.
  const writeAhead = !rerunEphemeral && !(tool.readOnly === true && recorded === undefined);
  try {
    if (writeAhead) await pass.recorder.record(entry);
  } catch (error) {
    return pass.failWith(error);
  }
  // A deferred write that failed meanwhile stopped the pass: run nothing that cannot be recorded.
  if (pass.storageFailed) return HALT;
  // The write-ahead may have taken long (a stalled process, a slow store): the tool runs only
  // while the lease is surely held.
  const halted = await pass.checkLease();
  if (halted) return halted;

  // A call already in the log (approved, interrupted, ephemeral) gets the arguments recorded, as
  // the approver saw them: the program's may differ in key order (the comparison ignores it).
  let args = call.args;
  if (!call.validated && recorded) {
    try {
      args = decodeDurable(recorded.args);
    } catch (error) {
      return pass.failWith(error);
    }
  }
  // R-CON-2: arguments are checked before execute; a mismatch rejects the call in the sandbox
  // and is recorded, so it replays as the same rejection.
  const validator = call.validated ? undefined : pass.validators.get(`${call.connector}.${call.method}`);
  if (validator) {
    const validation = await validator(args);
    if (!validation.ok) return refuse(pass, entry, validation.message);
    args = validation.value;
  }
  const context = {
    executionId: pass.head.id,
    seq: call.seq,
    idempotencyKey: `${pass.head.id}:${call.seq}`,
    connector: call.connector,
    method: call.method,
    ...(pass.signal ? { signal: pass.signal } : {}),
    ...(pass.deadline === undefined ? {} : { deadline: pass.deadline }),
  };
  let result: unknown;
  try {
    result = await tool.execute(args as never, context);
  } catch (error) {
    return recordFailure(pass, entry, call, error);
  }
  // R-CN-OA: a result that breaks the tool's outputSchema is never handed to the program; it is
  // recorded as the call's error, so every replay rejects the same way.
  const resultCheck = pass.resultValidators.get(`${call.connector}.${call.method}`);
  if (resultCheck) {
    const checked = await resultCheck(result);
    if (!checked.ok) return refuse(pass, entry, checked.message);
    result = checked.value;
  }
  let resultText: string;
  try {
    resultText = encodeDurable(result, `the result of ${call.connector}.${call.method}`);
  } catch (error) {
    // The effect happened; keep that in the log even though its result cannot be kept.
    await pass.recorder
      .record({ ...entry, state: "applied", error: clipMessage(errorMessage(error)), endedAt: Date.now() })
      .catch(() => undefined);
    return pass.failWith(error);
  }
  if (!rerunEphemeral)
    pass.recorder.recordLater(
      ephemeral
        ? { ...entry, state: "applied", endedAt: Date.now() }
        : { ...entry, state: "applied", result: resultText, endedAt: Date.now() },
    );
  // The effect happened and is recorded; a result that took the log past its quota ends the pass.
  const overQuota = pass.budget.exceeded();
  if (overQuota) return pass.failWith(overQuota);
  return { kind: "value", value: resultText };
}

/**
 * R-CON-3: a tool's error is recorded and rejects the call in the sandbox. A built-in tool may
 * throw a `CodemodeError` to end the pass with its code (a download over the durable limit).
 */
async function recordFailure(
  pass: PassState,
  entry: StoredEntry,
  call: CheckedCall,
  error: unknown,
): Promise<HostReply> {
  const message = clipMessage(errorMessage(error));
  try {
    await pass.recorder.record({ ...entry, state: "error", error: message, endedAt: Date.now() });
  } catch (storeError) {
    return pass.failWith(storeError);
  }
  if (call.connector === "codemode" && CodemodeError.isInstance(error)) return pass.failWith(error);
  return { kind: "error", message };
}

/** Records a refused call as an error entry, which replays as the same rejection. */
async function refuse(pass: PassState, entry: StoredEntry, reason: string): Promise<HostReply> {
  const message = clipMessage(reason);
  try {
    await pass.recorder.record({ ...entry, state: "error", error: message, endedAt: Date.now() });
  } catch (error) {
    return pass.failWith(error);
  }
  return { kind: "error", message };
}

function newEntry(call: CheckedCall, state: StoredEntry["state"]): StoredEntry {
  return {
    seq: call.seq,
    connector: call.connector,
    method: call.method,
    args: call.argsText,
    requiresApproval: false,
    state,
    startedAt: Date.now(),
  };
}

export function toRecordedCall(entry: StoredEntry): RecordedCall {
  const recorded: RecordedCall = {
    connector: entry.connector,
    method: entry.method,
    // An edited call is the program's call with other arguments run (R-AP-9): it matches what was asked.
    canonicalArgs: canonicalOf(typeof entry.requestedArgs === "string" ? entry.requestedArgs : entry.args),
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
