// What passes through LangGraph's interrupt for a Code Mode approval: the request the middleware
// raises, and the response a resume carries. Both the middleware and resumeCodemodeApproval read it.
import type { PendingAction } from "@codemode/core";
import { describePendingAction } from "@codemode/core/adapters";

/** The decisions a reviewer may give each action: LangChain 1's human-in-the-loop kinds. */
export type CodemodeDecisionType = "approve" | "edit" | "reject";

/**
 * The value of the interrupt a Code Mode pause raises: one action request per pending action
 * (a program may wait on several at once, R-AP-8). Shaped like `humanInTheLoopMiddleware`'s
 * request, so the same review screen shows both; `pending` adds the execution and seq per action.
 */
export interface CodemodeApprovalRequest {
  actionRequests: Array<{ name: string; args: unknown; description: string }>;
  /** Per action: approve, edit and reject; `argsSchema` is the tool's input schema, for an edit form. */
  reviewConfigs: Array<{
    actionName: string;
    allowedDecisions: CodemodeDecisionType[];
    argsSchema?: Record<string, unknown>;
  }>;
  /** The same actions, in the same order, as the runtime knows them. */
  pending: PendingAction[];
  /** Why the previous resume value was not used; the request is asked again. */
  error?: string;
}

/** Who decided and why, on any decision; `by` goes to the audit trail. */
interface DecisionNotes {
  /** Why. On a rejection it is the message of the `ApprovalDenied` error the program sees. */
  message?: string;
  by?: string;
}

/**
 * One answer, in the order of `actionRequests`, as LangChain 1's human-in-the-loop decisions:
 * approve runs the call; edit runs it with `editedAction.args` (checked by the tool's schema;
 * `name`, when given, must be the action's); reject denies it, so the call rejects inside the
 * program with an `ApprovalDenied` error carrying `message` (the program may catch it).
 */
export type CodemodeApprovalDecision =
  | ({ type: "approve" } & DecisionNotes)
  | ({ type: "edit"; editedAction: { name?: string; args: unknown } } & DecisionNotes)
  | ({ type: "reject" } & DecisionNotes);

/** What to resume with: `new Command({ resume: { decisions: [{ type: "approve" }] } })`. */
export interface CodemodeApprovalResponse {
  decisions: CodemodeApprovalDecision[];
}

/** The name an action request and its review config carry: `connector.method`. */
export function actionName(action: PendingAction): string {
  return `${action.connector}.${action.method}`;
}

/** The interrupt value for `actions`, with why the previous answer was not used. */
export function approvalRequest(
  actions: readonly PendingAction[],
  describe: (action: PendingAction) => string = defaultDescription,
  error?: string,
): CodemodeApprovalRequest {
  return {
    actionRequests: actions.map((action) => ({
      name: actionName(action),
      args: action.args,
      description: describe(action),
    })),
    reviewConfigs: actions.map((action) => ({
      actionName: actionName(action),
      allowedDecisions: ["approve", "edit", "reject"],
      ...(action.inputSchema ? { argsSchema: action.inputSchema } : {}),
    })),
    pending: [...actions],
    ...(error ? { error } : {}),
  };
}

/** `Code Mode wants to run shop.create_order({"sku":"mug"}) (execution …, call 2)`. */
export function defaultDescription(action: PendingAction): string {
  return `Code Mode wants to run ${describePendingAction(action)} (execution ${action.executionId}, call ${action.seq})`;
}

/** True for the value of an interrupt a Code Mode pause raised. */
export function isCodemodeRequest(value: unknown): value is CodemodeApprovalRequest {
  const request = value as Partial<CodemodeApprovalRequest> | null | undefined;
  return Array.isArray(request?.pending) && Array.isArray(request.actionRequests);
}
