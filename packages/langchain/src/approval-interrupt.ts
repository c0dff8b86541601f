// What passes through LangGraph's interrupt for a Code Mode approval: the request the middleware
// raises, and the response a resume carries. Both the middleware and resumeCodemodeApproval read it.
import type { PendingAction } from "@codemode/core";

/**
 * The value of the interrupt a Code Mode pause raises. Shaped like `humanInTheLoopMiddleware`'s
 * request, so the same review screen shows both; `pending` adds the execution and seq per action.
 */
export interface CodemodeApprovalRequest {
  actionRequests: Array<{ name: string; args: unknown; description: string }>;
  reviewConfigs: Array<{ actionName: string; allowedDecisions: Array<"approve" | "reject"> }>;
  /** The same actions, in the same order, as the runtime knows them. */
  pending: PendingAction[];
  /** Why the previous resume value was not used; the request is asked again. */
  error?: string;
}

/** One answer, in the order of `actionRequests`. `message` is the reason, told to the model on a rejection. */
export type CodemodeApprovalDecision = { type: "approve" | "reject"; message?: string; by?: string };

/** What to resume with: `new Command({ resume: { decisions: [{ type: "approve" }] } })`. */
export interface CodemodeApprovalResponse {
  decisions: CodemodeApprovalDecision[];
}
