import { checkArgument, RECORD, shapeOf } from "@codemode/core/adapters";
import { Command } from "@langchain/langgraph";
import { approvalDecisions } from "./approval-decisions.js";
import { type CodemodeApprovalResponse, isCodemodeRequest } from "./approval-interrupt.js";
import { FUNCTION } from "./check-options.js";

/** What `resumeCodemodeApproval` needs of an agent: `createAgent`'s (or any compiled graph's) `getState` and `invoke`. */
export interface ResumableAgent<Result> {
  getState(
    config: ThreadConfig,
  ): Promise<{ values?: unknown; tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ value?: unknown }> }> }>;
  invoke(input: Command, config: ThreadConfig): Promise<Result>;
}

/** The config that names the thread: `{ configurable: { thread_id } }`, as for `agent.invoke`. */
export type ThreadConfig = { configurable?: { thread_id?: string | number } & Record<string, unknown> } & Record<
  string,
  unknown
>;

const RESUME_ERROR = Symbol.for("codemode.langchain.CodemodeResumeError");

/**
 * `NO_CHECKPOINT`: the checkpointer has no state for the thread. `NO_INTERRUPT`: the thread waits
 * on no Code Mode approval. `INVALID_DECISIONS`: the decisions do not fit the actions it waits on
 * (a wrong count, a malformed decision).
 */
export type CodemodeResumeErrorCode = "NO_CHECKPOINT" | "NO_INTERRUPT" | "INVALID_DECISIONS";

/** A resume that found no Code Mode approval to apply its decisions to: nothing was decided or run. */
export class CodemodeResumeError extends Error {
  readonly [RESUME_ERROR] = true;
  override readonly name = "CodemodeResumeError";
  readonly code: CodemodeResumeErrorCode;

  constructor(code: CodemodeResumeErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  /** True for a CodemodeResumeError from any copy of this package. */
  static isInstance(error: unknown): error is CodemodeResumeError {
    return (
      typeof error === "object" && error !== null && (error as { [RESUME_ERROR]?: unknown })[RESUME_ERROR] === true
    );
  }
}

const AGENT = shapeOf(
  { getState: FUNCTION, invoke: FUNCTION },
  "an agent with getState and invoke (createAgent's, or a compiled graph)",
  ["getState", "invoke"],
);
const RESPONSE = shapeOf(
  { decisions: { expected: "an array", accepts: Array.isArray } },
  'the response { decisions: [{ type: "approve" | "edit" | "reject" }] }',
  ["decisions"],
);

/**
 * `agent.invoke(new Command({ resume }), config)` for a Code Mode approval, after checking that the
 * thread really waits on one. LangGraph answers a resume that finds no interrupt with an empty
 * result and no error — after a restart with an in-memory checkpointer (`MemorySaver`), a wrong
 * `thread_id`, or a thread already resumed — and the run stays paused without anyone noticing.
 * This throws `CodemodeResumeError` instead, saying which it is and what to do. With a checkpointer
 * that survives restarts (`PostgresSaver` from `@langchain/langgraph-checkpoint-postgres`,
 * `SqliteSaver` from `@langchain/langgraph-checkpoint-sqlite`) and a runtime over a durable store,
 * the resume may come from another process, days later.
 *
 * `response.decisions` answer the interrupt's action requests in their order, in LangChain 1's
 * human-in-the-loop shape: `{ type: "approve" }`, `{ type: "edit", editedAction: { args } }`,
 * `{ type: "reject", message }`. A wrong count or a malformed decision throws `INVALID_DECISIONS`
 * before anything is resumed.
 *
 * @example
 * const agent = createAgent({ model, tools, middleware: [codemodeApprovalMiddleware(runtime)], checkpointer: PostgresSaver.fromConnString(url) });
 * const result = await resumeCodemodeApproval(
 *   agent,
 *   { decisions: [{ type: "approve", by: "ann" }, { type: "edit", editedAction: { args: { sku: "mug", quantity: 1 } }, by: "ann" }] },
 *   { configurable: { thread_id } },
 * );
 */
export async function resumeCodemodeApproval<Result>(
  agent: ResumableAgent<Result>,
  response: CodemodeApprovalResponse,
  config: ThreadConfig,
): Promise<Result> {
  const usage = "resumeCodemodeApproval(agent, response, config)";
  checkArgument(usage, "agent", agent, AGENT);
  checkArgument(usage, "response", response, RESPONSE);
  checkArgument(usage, "config", config, { ...RECORD, expected: "an object, e.g. { configurable: { thread_id } }" });
  const threadId = config.configurable?.thread_id;
  const state = await agent.getState(config);
  const interrupts = (state.tasks ?? []).flatMap((task) => task.interrupts ?? []);
  if (interrupts.length === 0) {
    const messages = (state.values as { messages?: unknown[] } | undefined)?.messages ?? [];
    if (messages.length === 0) {
      throw new CodemodeResumeError(
        "NO_CHECKPOINT",
        `thread ${JSON.stringify(threadId)} has no checkpoint, so there is no Code Mode approval to resume. An in-memory checkpointer (MemorySaver) loses its threads when the process ends: ` +
          "give createAgent a checkpointer that survives restarts (PostgresSaver from @langchain/langgraph-checkpoint-postgres, SqliteSaver from @langchain/langgraph-checkpoint-sqlite), or check the thread_id. " +
          "The paused run itself is still in the Code Mode store: runtime.pending() lists it, and runtime.approve with continueAfterApproval continues without the interrupt.",
      );
    }
    throw new CodemodeResumeError(
      "NO_INTERRUPT",
      `thread ${JSON.stringify(threadId)} waits on no interrupt: its run ended or was resumed already, so the decision was not applied to anything.`,
    );
  }
  const request = interrupts.map((pending) => pending.value).find(isCodemodeRequest);
  if (!request) {
    throw new CodemodeResumeError(
      "NO_INTERRUPT",
      `thread ${JSON.stringify(threadId)} waits on an interrupt that is not a Code Mode approval (not raised by codemodeApprovalMiddleware): resume it with agent.invoke(new Command({ resume }), config) and the value it expects.`,
    );
  }
  // Checked here too, so a mistake throws at the caller instead of coming back as a new interrupt.
  const checked = approvalDecisions(response, request.pending);
  if (typeof checked === "string")
    throw new CodemodeResumeError("INVALID_DECISIONS", `${checked}. Nothing was decided.`);
  return agent.invoke(new Command({ resume: response }), config);
}
