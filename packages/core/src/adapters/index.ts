// @codemode/core/adapters: what the framework adapters (@codemode/ai-sdk, @codemode/langchain,
// and yours) share, so each stays thin. Applications rarely need these directly.

export { methodNamesFor } from "../connectors/method-names.js";
export { errorMessage, isErrorNamed } from "../error-message.js";
export { directCallCode, type ModelTool, type ToolCallInput } from "../runtime/operations/index.js";
export { chatMayDecide, checkChatDecision, signPauseApproval } from "./chat-decision.js";
export {
  BOOLEAN,
  checkArgument,
  checkOptions,
  describeValue,
  type Expectation,
  HINTS,
  MODEL_OUTPUT,
  OUTCOME,
  RECORD,
  recordOf,
  runtimeWith,
  STRING,
  shapeOf,
} from "./check-argument.js";
export {
  type DecisionOutcome,
  decidePendingAction,
  decidePendingActions,
  type ModelFacingRejection,
  modelFacingDecision,
  type PendingDecision,
  type PendingDecisions,
  type RejectedOutcome,
} from "./decide-pending-action.js";
export { listenOn } from "./listen.js";
export { type ModelDescriptionOptions, modelDescription } from "./model-description.js";
export {
  approvalFollowUpText,
  type ModelFacingOutcome,
  type ModelOutputOptions,
  modelFacingOutcome,
} from "./model-output.js";
export { createOutcomeMemo, type OutcomeMemo } from "./outcome-memo.js";
export { checkPauseReference, type PauseState, pauseState } from "./pause-state.js";
export {
  approvalReasonText,
  describePendingAction,
  executionIdOfModelOutput,
  type PauseReference,
  pauseApprovalReason,
  readPauseReference,
  toModelJson,
} from "./pending-approval.js";
