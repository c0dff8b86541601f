import { checkDurableSize, clipMessage } from "../../log/durable-value.js";
import type { StoredEntry } from "../../log/interface.js";
import type { HostReply, SandboxRequest } from "../../sandbox/executor.js";
import { planStep, stepArgs } from "./call-plan.js";
import { toRecordedCall } from "./handle-call.js";
import type { PassState } from "./pass-state.js";

/**
 * R-RP-5: `codemode.step(name, fn)` ran `fn` inside the sandbox; the host records its value (or
 * error) with `seqAfter`, so a replay can skip `fn` and the calls inside it.
 */
export async function handleStep(
  pass: PassState,
  request: Extract<SandboxRequest, { type: "step" }>,
): Promise<HostReply> {
  const { seq, name } = request;
  const reused = pass.claimSeq(seq);
  if (reused) return reused;
  const recorded = pass.log.get(seq);
  const decision = planStep(seq, name, recorded && toRecordedCall(recorded));
  if (decision.type === "diverge")
    return pass.halt({
      kind: "error",
      code: "REPLAY_DIVERGENCE",
      message: decision.divergence.message,
      divergence: decision.divergence,
    });
  if (decision.type === "replay") return { kind: "value", value: "" };
  try {
    // The name is the step's identity, kept in its entry: it is held to the limit of values.
    checkDurableSize(stepArgs(name), "the name of a codemode.step");
    if (request.value !== undefined)
      checkDurableSize(
        request.value,
        `the result of codemode.step("${name.length <= 200 ? name : `${name.slice(0, 200)}…`}")`,
      );
  } catch (error) {
    return pass.failWith(error);
  }
  const overQuota = pass.budget.refusal(
    Buffer.byteLength(name) + Buffer.byteLength(request.value ?? request.error ?? ""),
  );
  if (overQuota) return pass.failWith(overQuota);
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
  else entry.error = clipMessage(request.error);
  try {
    await pass.recorder.record(entry);
  } catch (error) {
    return pass.failWith(error);
  }
  return { kind: "value", value: "" };
}
