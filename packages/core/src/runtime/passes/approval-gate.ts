import { clipMessage } from "../../log/durable-value.js";
import type { StoredEntry } from "../../log/interface.js";
import type { ApprovalDecision } from "../../outcome.js";
import type { HostReply } from "../../sandbox/executor.js";
import { consultPolicy } from "../approvals/index.js";
import type { PassState } from "./pass-state.js";

/** What the gate needs of a call the pass checked (see handle-call.ts). */
export interface GatedCall {
  seq: number;
  connector: string;
  method: string;
  args: unknown;
  description: string | undefined;
  recorded: StoredEntry | undefined;
  /** The entry a new call starts from. */
  fresh(state: StoredEntry["state"]): StoredEntry;
}

const WAIT: HostReply = { kind: "wait" };

/**
 * A call that requires approval, before it pauses (R-AP-9, R-AP-10): a grant in force approves
 * it, else the policy (for a call new to the log) approves it, denies it or lets it wait for a
 * person. `run` executes an approved call with the decision recorded on its entry.
 */
export async function gateCall(
  pass: PassState,
  call: GatedCall,
  run: (decision: ApprovalDecision) => Promise<HostReply>,
): Promise<HostReply> {
  // A call already pending when the grant was given keeps waiting for its own decision.
  const granted = call.recorded ? undefined : pass.grants.take(call.connector, call.method, call.seq);
  if (granted) return run(granted);
  const { policy } = pass.approvals;
  if (policy && !call.recorded) {
    const verdict = await consultPolicy(
      policy,
      {
        executionId: pass.head.id,
        seq: call.seq,
        connector: call.connector,
        method: call.method,
        args: call.args,
        ...(call.description ? { description: call.description } : {}),
      },
      { executionId: pass.head.id, runtime: pass.approvals.runtime },
      pass.approvals.warn,
      pass.approvals.timeoutMs,
    );
    // The pass may have stopped while the policy thought: nothing more runs or is recorded.
    if (pass.stop) return { kind: "halt" };
    const decided = { by: "policy", at: Date.now(), ...(verdict.reason ? { reason: verdict.reason } : {}) };
    if (verdict.decision === "approve") return run({ approved: true, decision: "approve", ...decided });
    if (verdict.decision === "deny") return deny(pass, call, { approved: false, decision: "deny", ...decided });
  }
  return waitForPerson(pass, call);
}

/**
 * R-AP-1, R-AP-8: records a pending entry; the call never settles in this pass (the program never
 * sees a provisional result), but the program goes on, so that every call it issues before it can
 * go no further is decided together. An entry already pending and undecided is not written again.
 */
function waitForPerson(pass: PassState, call: GatedCall): Promise<HostReply> {
  pass.pending.push(call.seq);
  const recorded = call.recorded;
  if (recorded?.state === "pending" && recorded.requiresApproval && !recorded.decision) return Promise.resolve(WAIT);
  const entry: StoredEntry = recorded
    ? { ...recorded, state: "pending", requiresApproval: true }
    : { ...call.fresh("pending"), requiresApproval: true };
  if (recorded?.state === "executing") entry.interrupted = true;
  // A new pause: an answer to the earlier one (a stale page, an old signed chat answer) decides nothing.
  entry.asked = recorded ? (recorded.asked ?? 1) + 1 : 1;
  // A grant this call ran through stays spent: asking again does not give it back.
  const viaGrant = recorded?.decision?.viaGrant;
  if (viaGrant !== undefined) entry.grantSpent = viaGrant;
  delete entry.decision;
  return pass.recorder.record(entry).then(
    () => WAIT,
    (error: unknown) => pass.failWith(error),
  );
}

/** The policy denied the call: recorded `denied`, it rejects inside the program as `ApprovalDenied`. */
async function deny(pass: PassState, call: GatedCall, decision: ApprovalDecision): Promise<HostReply> {
  const fresh = call.fresh("denied");
  const entry: StoredEntry = {
    ...fresh,
    requiresApproval: true,
    decision,
    error: denialMessage(fresh, decision),
    endedAt: decision.at,
  };
  try {
    await pass.recorder.record(entry);
  } catch (error) {
    return pass.failWith(error);
  }
  return deniedReply(entry);
}

/** Arguments longer than this are cut in a denial's message (the error's `args` field has them whole). */
const SHOWN_ARGS_CHARS = 200;

/**
 * The message a denied call rejects with inside the program, and keeps in its entry: the call with
 * its arguments, who denied it and why (`shop.create_order({"item":"pen"}) was denied by ops: out of stock`).
 */
export function denialMessage(
  entry: Pick<StoredEntry, "connector" | "method" | "args">,
  decision: Pick<ApprovalDecision, "by" | "reason">,
) {
  const args = entry.args.length > SHOWN_ARGS_CHARS ? `${entry.args.slice(0, SHOWN_ARGS_CHARS)}…` : entry.args;
  const by = decision.by ? ` by ${decision.by}` : "";
  return clipMessage(
    `${entry.connector}.${entry.method}(${args}) was denied${by}${decision.reason ? `: ${decision.reason}` : ""}`,
  );
}

/**
 * How a denied entry answers the program, in the pass that denied it and in every replay: the
 * message it was first given (kept on the entry) and the facts of the call and the decision.
 */
export function deniedReply(entry: StoredEntry): HostReply {
  const decision = entry.decision;
  return {
    kind: "denied",
    message: entry.error ?? `${entry.connector}.${entry.method} was denied`,
    denial: {
      seq: entry.seq,
      call: `${entry.connector}.${entry.method}`,
      args: entry.args,
      ...(decision?.by !== undefined ? { by: decision.by } : {}),
      ...(decision?.reason !== undefined ? { reason: decision.reason } : {}),
    },
  };
}
