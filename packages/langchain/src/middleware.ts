import type { CodemodeRuntime, Outcome, PendingAction } from "@codemode/core";
import {
  checkArgument,
  checkOptions,
  decidePendingActions,
  MODEL_OUTPUT,
  type ModelOutputOptions,
  runtimeWith,
  STRING,
} from "@codemode/core/adapters";
import type { ToolMessage } from "@langchain/core/messages";
import { interrupt } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { approvalDecisions } from "./approval-decisions.js";
import { approvalRequest, type CodemodeApprovalRequest, defaultDescription } from "./approval-interrupt.js";
import { FUNCTION } from "./check-options.js";
import { type AskingPause, storedPauses } from "./stored-pauses.js";
import { approvalToolMessage, DEFAULT_TOOL_NAME } from "./tool-messages.js";

export type {
  CodemodeApprovalDecision,
  CodemodeApprovalRequest,
  CodemodeApprovalResponse,
  CodemodeDecisionType,
} from "./approval-interrupt.js";
export {
  CodemodeResumeError,
  type CodemodeResumeErrorCode,
  type ResumableAgent,
  resumeCodemodeApproval,
  type ThreadConfig,
} from "./resume-codemode-approval.js";

export interface CodemodeApprovalMiddlewareOptions {
  /** The Code Mode tool's name. Default "codemode". */
  toolName?: string;
  /** The text a reviewer sees per action. Default: `Code Mode wants to run shop.create_order({"sku":"mug"}) (execution …, call 2)`. */
  describe?: (action: PendingAction) => string;
  /** How much console output the model sees in the result that replaces the pause. */
  modelOutput?: ModelOutputOptions;
}

type DecidingRuntime = Pick<CodemodeRuntime, "decide" | "outcome" | "execution" | "approve" | "reject">;

/**
 * Carries Code Mode pauses through LangGraph's interrupt for `createAgent` (needs a checkpointer).
 * Before the model reads a paused Code Mode result, the agent interrupts with one action request
 * per pending action (a program may wait on several at once, R-AP-8), in LangChain 1's
 * human-in-the-loop shape. Resume with `new Command({ resume: { decisions } })`, one decision per
 * action in their order: `{ type: "approve" }`, `{ type: "edit", editedAction: { args } }` or
 * `{ type: "reject", message }` (a denial the program may catch). The decisions on one run go to
 * `runtime.decide` in one call (R-AP-9); a run that pauses again interrupts again; the final
 * outcome replaces the paused tool result, so the model continues with the real result (R-LC-2).
 *
 * @example
 * const agent = createAgent({
 *   model,
 *   tools: [createCodemodeTool(runtime)],
 *   middleware: [codemodeApprovalMiddleware(runtime)],
 *   checkpointer: new MemorySaver(),
 * });
 * let result = await agent.invoke({ messages: [{ role: "user", content: "Order two mugs" }] }, config);
 * while (result.__interrupt__?.length) result = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
 */
export function codemodeApprovalMiddleware(runtime: CodemodeRuntime, options: CodemodeApprovalMiddlewareOptions = {}) {
  const usage = "codemodeApprovalMiddleware(runtime, options)";
  checkArgument(usage, "runtime", runtime, runtimeWith("decide", "outcome", "execution"));
  checkOptions(usage, options, { toolName: STRING, describe: FUNCTION, modelOutput: MODEL_OUTPUT });
  const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
  const describe = options.describe ?? defaultDescription;
  const messageOptions = options.modelOutput ? { modelOutput: options.modelOutput } : {};
  return createMiddleware({
    name: "CodemodeApprovalMiddleware",
    beforeModel: {
      // A run that pauses again goes back through the tools node (it runs nothing: every call has
      // its result) to this hook, which asks in a new node run. LangGraph runs a resumed node again
      // from the top and hands earlier resume values back in order, so a node that interrupted once
      // per pause would meet old decisions that fit no pause the log can tell apart (R-AP-8).
      canJumpTo: ["tools"],
      hook: async (state) => {
        const pauses = await storedPauses(runtime, state.messages, toolName);
        if (pauses.length === 0) return undefined;
        const asking = pauses.filter((pause) => pause.state === "asking");
        const changed = pauses.filter((pause) => pause.state === "changed");
        if (changed.length > 0) {
          // Nothing is asked until the thread shows what the store holds; what still waits is asked
          // in a new node run, so no resume value meant for the old picture can reach it.
          const messages = changed.map((pause) => approvalToolMessage(pause.outcome, pause.message, messageOptions));
          const stillPaused = asking.length > 0 || changed.some((pause) => pause.outcome.status === "paused");
          return stillPaused ? { messages, jumpTo: "tools" as const } : { messages };
        }
        const decided = await decideWaiting(runtime, asking, describe);
        const messages = [...decided].map(([message, outcome]) =>
          approvalToolMessage(outcome, message, messageOptions),
        );
        const pausedAgain =
          asking.some((pause) => !decided.has(pause.message)) ||
          [...decided.values()].some((outcome) => outcome.status === "paused");
        return pausedAgain ? { messages, jumpTo: "tools" as const } : { messages };
      },
    },
  });
}

/**
 * Interrupts once with every pending action of the waiting calls, as the store holds them, and
 * applies the answer, one `runtime.decide` per run (R-AP-9): decision `i` goes to the seq that
 * action request `i` showed. A resume value it cannot use (a wrong count, a malformed decision,
 * edited arguments the tool refuses) changes nothing and is answered with the request again and
 * the reason, as data: LangGraph keeps a consumed resume value for every later run of the node, so
 * throwing would leave the thread stuck. Once the answer changed a run, nothing more is asked in
 * this node run: a run whose decisions the tool refused is left undecided, asked about in the next
 * one. LangGraph runs a resumed node again from the top, and `storedPauses` asks only while the
 * store waits on the actions the thread shows, so a re-run reaches the same requests with the same
 * resume values; a run that moved on elsewhere is asked about anew, never fitted an old answer.
 */
async function decideWaiting(
  runtime: DecidingRuntime,
  waiting: AskingPause[],
  describe: (action: PendingAction) => string,
): Promise<Map<ToolMessage, Outcome>> {
  const decided = new Map<ToolMessage, Outcome>();
  let open = waiting;
  let problem: string | undefined;
  while (open.length > 0) {
    const actions = open.flatMap((call) => call.pending);
    const request: CodemodeApprovalRequest = approvalRequest(actions, describe, problem);
    const inputs = approvalDecisions(interrupt<CodemodeApprovalRequest, unknown>(request), actions);
    if (typeof inputs === "string") {
      problem = inputs;
      continue;
    }
    const refused: AskingPause[] = [];
    const reasons: string[] = [];
    for (const call of open) {
      const input = inputs.find((each) => each.executionId === call.executionId);
      if (!input) continue;
      const outcome = await decidePendingActions(runtime, input);
      if (outcome.status === "error" && outcome.code === "INVALID_DECISION") {
        refused.push(call);
        reasons.push(outcome.error);
      } else decided.set(call.message, await settled(runtime, outcome));
    }
    if (decided.size > 0) break;
    open = refused;
    problem = reasons.length > 0 ? `refused, so not decided: ${reasons.join("; ")}` : undefined;
  }
  return decided;
}

/**
 * Where a run stands after its decisions. NOT_PAUSED means someone else decided these actions
 * meanwhile (or a denial ended the run): the run's outcome now says what followed, and a new
 * pause there is asked about next.
 */
async function settled(runtime: DecidingRuntime, outcome: Outcome): Promise<Outcome> {
  if (outcome.status !== "error" || outcome.code !== "NOT_PAUSED") return outcome;
  return (await runtime.outcome(outcome.executionId).catch(() => null)) ?? outcome;
}
