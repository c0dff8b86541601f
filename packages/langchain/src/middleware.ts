import type { CodemodeRuntime, PendingAction } from "@codemode/core";
import {
  checkArgument,
  checkOptions,
  type DecisionOutcome,
  decidePendingAction,
  describePendingAction,
  MODEL_OUTPUT,
  type ModelOutputOptions,
  runtimeWith,
  STRING,
} from "@codemode/core/adapters";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { interrupt } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import type { CodemodeApprovalDecision, CodemodeApprovalRequest } from "./approval-interrupt.js";
import { FUNCTION } from "./check-options.js";
import {
  approvalToolMessage,
  DEFAULT_TOOL_NAME,
  type PausedCodemodeCall,
  pausedCodemodeCalls,
} from "./tool-messages.js";

export type {
  CodemodeApprovalDecision,
  CodemodeApprovalRequest,
  CodemodeApprovalResponse,
} from "./approval-interrupt.js";
export {
  CodemodeResumeError,
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

/**
 * Carries Code Mode pauses through LangGraph's interrupt for `createAgent` (needs a checkpointer).
 * Before the model reads a paused Code Mode result, the agent interrupts with the pending action;
 * resume with `new Command({ resume: { decisions: [{ type: "approve" }] } })` (or `reject`, with a
 * `message`), as for `humanInTheLoopMiddleware`. The decision goes to `runtime.approve` /
 * `runtime.reject`; a run that pauses again interrupts again; the final outcome replaces the
 * paused tool result, so the model continues with the real result (R-LC-2).
 *
 * LangGraph runs a node again from the top on every resume: decisions already applied are
 * answered from the execution's log (`decidePendingAction`), so nothing runs twice.
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
  checkArgument(usage, "runtime", runtime, runtimeWith("approve", "reject", "execution"));
  checkOptions(usage, options, { toolName: STRING, describe: FUNCTION, modelOutput: MODEL_OUTPUT });
  const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
  const describe = options.describe ?? defaultDescription;
  return createMiddleware({
    name: "CodemodeApprovalMiddleware",
    beforeModel: async (state) => {
      let waiting = pausedCodemodeCalls(latestToolResults(state.messages), { toolName });
      if (waiting.length === 0) return undefined;
      const decided = new Map<ToolMessage, DecisionOutcome>();
      while (waiting.length > 0) {
        const actions = waiting.map((call) => call.pending[0]!);
        const decisions = askForDecisions(actions, describe);
        const stillWaiting: PausedCodemodeCall[] = [];
        for (const [index, call] of waiting.entries()) {
          const action = actions[index]!;
          const decision = decisions[index]!;
          const outcome = await decidePendingAction(runtime, {
            executionId: action.executionId,
            seq: action.seq,
            approved: decision.type === "approve",
            ...(decision.by ? { by: decision.by } : {}),
            ...(decision.message ? { reason: decision.message } : {}),
          });
          decided.set(call.message, outcome);
          if (outcome.status === "paused" && outcome.pending.length > 0)
            stillWaiting.push({ ...call, pending: outcome.pending });
        }
        waiting = stillWaiting;
      }
      const replacements = [...decided].map(([message, outcome]) =>
        approvalToolMessage(outcome, message, options.modelOutput ? { modelOutput: options.modelOutput } : {}),
      );
      return { messages: replacements };
    },
  });
}

/** The tool results of the latest model turn: older pauses were answered when they happened. */
function latestToolResults(messages: readonly BaseMessage[]): BaseMessage[] {
  const lastModelTurn = messages.findLastIndex((message) => AIMessage.isInstance(message));
  return messages.slice(lastModelTurn + 1).filter((message) => ToolMessage.isInstance(message));
}

/**
 * Interrupts until the resume value holds one usable decision per action. A value it cannot use
 * is answered with the same request and the reason, as data: LangGraph keeps a consumed resume
 * value for every later run of the node, so throwing would leave the thread stuck on it.
 */
function askForDecisions(
  actions: PendingAction[],
  describe: (action: PendingAction) => string,
): CodemodeApprovalDecision[] {
  let problem: string | undefined;
  for (;;) {
    const request: CodemodeApprovalRequest = {
      actionRequests: actions.map((action) => ({
        name: `${action.connector}.${action.method}`,
        args: action.args,
        description: describe(action),
      })),
      reviewConfigs: actions.map((action) => ({
        actionName: `${action.connector}.${action.method}`,
        allowedDecisions: ["approve", "reject"],
      })),
      pending: actions,
      ...(problem ? { error: problem } : {}),
    };
    const parsed = parseDecisions(interrupt<CodemodeApprovalRequest, unknown>(request), actions);
    if ("decisions" in parsed) return parsed.decisions;
    problem = parsed.problem;
  }
}

function defaultDescription(action: PendingAction): string {
  return `Code Mode wants to run ${describePendingAction(action)} (execution ${action.executionId}, call ${action.seq})`;
}

/** The decisions in a resume value, one per action, or why they cannot be used. */
function parseDecisions(
  response: unknown,
  actions: PendingAction[],
): { decisions: CodemodeApprovalDecision[] } | { problem: string } {
  const decisions = (response as { decisions?: unknown } | undefined)?.decisions;
  if (!Array.isArray(decisions) || decisions.length !== actions.length) {
    return {
      problem: `resume with { decisions: [...] } holding ${actions.length} decision${actions.length === 1 ? "" : "s"} (approve or reject), one per action; got ${JSON.stringify(response)}`,
    };
  }
  const parsed: CodemodeApprovalDecision[] = [];
  for (const [index, decision] of decisions.entries()) {
    const { type, message, by } = (decision ?? {}) as Record<string, unknown>;
    if (type !== "approve" && type !== "reject") {
      const action = actions[index]!;
      return {
        problem: `decision ${index} for ${action.connector}.${action.method} must be "approve" or "reject" (an edit would change what the program already ran); got ${JSON.stringify(decision)}`,
      };
    }
    parsed.push({
      type,
      ...(typeof message === "string" && message ? { message } : {}),
      ...(typeof by === "string" && by ? { by } : {}),
    });
  }
  return { decisions: parsed };
}
