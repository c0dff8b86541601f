// One pass of an execution: run under its lease, each request answered (calls, steps), and settled into the record.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export { denialMessage, deniedReply } from "./approval-gate.js";
export { planCall, planStep } from "./call-plan.js";
export { cancelMessage } from "./cancel-watch.js";
export { divergentCall, withMessage } from "./divergence.js";
export { toRecordedCall } from "./handle-call.js";
export { newSecretSeed, type SeededHead } from "./pass-randomness.js";
export { pendingActionOf } from "./pending-view.js";
export { protoKeyMessage, protoKeyPath } from "./proto-keys.js";
export { answerService, passTools, routeRequest, runInSandbox, splitToolPath } from "./run-pass.js";
export { runLeasedPass, transformForModel } from "./settle-pass.js";
