// The pauses a model turn's Code Mode results show, as the runtime's store holds them now. A tool
// message in graph state is what was true once, or what a client sent: it only names the execution.
import { CodemodeError, type CodemodeRuntime, type PendingAction } from "@codemode/core";
import { type DecisionOutcome, directCallCode, type PauseState, pauseState } from "@codemode/core/adapters";
import { AIMessage, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import { pausedCodemodeCalls } from "./tool-messages.js";

/**
 * A paused Code Mode result of the latest model turn, checked against the store:
 * - `asking`: its execution runs the code of the tool call the message answers and is paused at
 *   exactly the actions the message shows; `pending` is the store's (arguments, description,
 *   input schema), never the message's;
 * - `changed`: it is not, and `outcome` (the store's) replaces the message: the run moved on
 *   (decided elsewhere, paused at other actions, ended), the message names no run of that tool
 *   call (NOT_FOUND), or the store could not be read (STORAGE_ERROR).
 */
export type StoredPause = AskingPause | { state: "changed"; message: ToolMessage; outcome: DecisionOutcome };

export interface AskingPause {
  state: "asking";
  message: ToolMessage;
  executionId: string;
  pending: PendingAction[];
}

type ReadingRuntime = Pick<CodemodeRuntime, "execution" | "outcome"> & Partial<Pick<CodemodeRuntime, "modelTools">>;

/**
 * The paused Code Mode results after the latest model turn (older pauses were answered when they
 * happened), each as the store has it. Asking needs the store to pause at exactly the actions the
 * message shows: LangGraph runs a resumed node again from the top, and the checkpointed message is
 * the only record of what its interrupt showed, so a decision list is matched to the actions shown
 * only while the store still waits on those; otherwise the message is brought up to date first.
 *
 * @example
 * const pauses = await storedPauses(runtime, state.messages, "codemode");
 */
export async function storedPauses(
  runtime: ReadingRuntime,
  messages: readonly BaseMessage[],
  toolName: string,
): Promise<StoredPause[]> {
  const lastModelTurn = messages.findLastIndex((message) => AIMessage.isInstance(message));
  const modelTurn = messages[lastModelTurn];
  const toolCalls = modelTurn && AIMessage.isInstance(modelTurn) ? (modelTurn.tool_calls ?? []) : [];
  // The Code Mode tool's results, and those of the tools the model calls directly (createModelTools).
  const direct = new Map((runtime.modelTools?.() ?? []).map((tool) => [tool.name, tool.tool]));
  const answered = messages.slice(lastModelTurn + 1);
  const waiting = [toolName, ...direct.keys()].flatMap((name) => pausedCodemodeCalls(answered, { toolName: name }));
  return Promise.all(
    waiting.map(async ({ message, executionId, pending }): Promise<StoredPause> => {
      // The execution must run the code of the call this message answers: an id copied from another
      // conversation, or made up, is NOT_FOUND and nothing is asked or decided for it.
      const call = toolCalls.find((candidate) => candidate.id === message.tool_call_id);
      const path = message.name === toolName ? undefined : direct.get(message.name ?? "");
      const code: unknown = path === undefined ? call?.args?.code : call && directCallCode(path, call.args);
      const shown = seqsOf(pending);
      const now = await readPause(runtime, { executionId, seq: shown[0] ?? 0, seqs: shown }, code);
      if (now.state === "waiting" && sameSeqs(seqsOf(now.outcome.pending), shown))
        return { state: "asking", message, executionId, pending: now.outcome.pending };
      return { state: "changed", message, outcome: now.outcome };
    }),
  );
}

/** `pauseState`, with a store that failed as an outcome with its code (R-RT-3), never a throw. */
async function readPause(
  runtime: ReadingRuntime,
  reference: { executionId: string; seq: number; seqs: number[] },
  code: unknown,
): Promise<PauseState> {
  try {
    return await pauseState(runtime, reference, { code });
  } catch (error) {
    if (!CodemodeError.isInstance(error)) throw error;
    // Nothing can be shown of a run the store could not read: the model is told why, nothing is asked.
    const { executionId } = reference;
    return {
      state: "missing",
      outcome: { status: "error", executionId, code: error.code, error: error.message, calls: [] },
    };
  }
}

function seqsOf(actions: readonly PendingAction[]): number[] {
  return actions.map((action) => action.seq).sort((left, right) => left - right);
}

function sameSeqs(left: readonly number[], right: readonly number[]): boolean {
  return left.length === right.length && left.every((seq, index) => seq === right[index]);
}
