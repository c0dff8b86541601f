// @codemode/core/adapters: what the framework adapters (@codemode/ai-sdk, @codemode/langchain,
// and yours) share, so each stays thin. Applications rarely need these directly.
export { modelDescription, type ModelDescriptionOptions } from "../runtime/model-description.js";
export { approvalFollowUpText, approvalResultText, modelFacingOutcome, type ModelFacingOutcome, type ModelOutputOptions } from "../runtime/model-output.js";
export {
  decidePendingAction,
  modelFacingDecision,
  type DecisionOutcome,
  type ModelFacingRejection,
  type PendingDecision,
  type RejectedOutcome,
} from "./decide-pending-action.js";
export { methodNamesFor } from "./method-names.js";
export { errorMessage } from "../error-message.js";
export {
  approvalReasonText,
  describePendingAction,
  executionIdOfModelOutput,
  pauseApprovalReason,
  readPauseReference,
  toModelJson,
  type PauseReference,
} from "./pending-approval.js";
export { createOutcomeMemo, type OutcomeMemo } from "./outcome-memo.js";
export { checkPauseReference, pauseState, type PauseState } from "./pause-state.js";
export { chatMayDecide, checkChatDecision, signPauseApproval } from "./chat-decision.js";
export type { ChatClaim } from "../runtime/approval-authority.js";
export { connectorDeclaration, jsonSchemaToType, runtimeDeclarations, toolDeclaration } from "../connectors/schema-to-typescript.js";
export { decideCall, decideStep, type CallDecision, type CallPolicy, type IssuedCall, type RecordedCall } from "../runtime/decide.js";
