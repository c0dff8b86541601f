import type { Outcome, PendingAction } from "@codemode/core";
import {
  approvalFollowUpText,
  checkArgument,
  checkOptions,
  type DecisionOutcome,
  MODEL_OUTPUT,
  type ModelOutputOptions,
  modelFacingDecision,
  OUTCOME,
  STRING,
} from "@codemode/core/adapters";
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MESSAGES } from "./check-options.js";

/** The name `createCodemodeTool` gives its tool unless told otherwise. */
export const DEFAULT_TOOL_NAME = "codemode";

/** The text of a Code Mode tool result: the model-facing outcome as JSON (no `calls`). */
export function codemodeToolContent(outcome: DecisionOutcome, options?: ModelOutputOptions): string {
  checkArgument("codemodeToolContent(outcome, options)", "outcome", outcome, OUTCOME);
  if (options !== undefined) checkArgument("codemodeToolContent(outcome, options)", "options", options, MODEL_OUTPUT);
  return JSON.stringify(modelFacingDecision(outcome, options));
}

/** The tool message a new outcome replaces: the paused `ToolMessage` itself, or its ids. */
export type ReplacedToolMessage = ToolMessage | { toolCallId: string; id?: string; name?: string };

/**
 * The `ToolMessage` that carries the outcome of `runtime.approve` (or of a rejection) back into
 * the conversation (R-LC-2): it answers the original tool call (same `tool_call_id`) and, given
 * the paused message, keeps its `id`, so LangGraph's message reducer replaces the paused result
 * and the model sees the real one where the pause was.
 *
 * @example
 * const [paused] = pausedCodemodeCalls(result.messages);
 * const outcome = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
 * await agent.invoke({ messages: [approvalToolMessage(outcome, paused.message)] }, config);
 */
export function approvalToolMessage(
  outcome: DecisionOutcome,
  replaces: ReplacedToolMessage,
  options: { modelOutput?: ModelOutputOptions } = {},
): ToolMessage {
  checkReplacement("approvalToolMessage(outcome, replaces, options)", outcome, replaces, options);
  const ids = ToolMessage.isInstance(replaces)
    ? { toolCallId: replaces.tool_call_id, id: replaces.id, name: replaces.name }
    : replaces;
  return new ToolMessage({
    content: codemodeToolContent(outcome, options.modelOutput),
    artifact: outcome,
    tool_call_id: ids.toolCallId,
    ...(ids.id ? { id: ids.id } : {}),
    name: ids.name ?? DEFAULT_TOOL_NAME,
  });
}

/**
 * The messages to continue a conversation with after `runtime.approve` (or a rejection) made
 * outside the agent, without the middleware (R-LC-2): `approvalToolMessage`, which replaces the
 * paused result (same message `id`), then a short user turn saying that the run went on and how it
 * ended. The model already answered the pause ("your order waits for approval"); without the new
 * turn the thread would end with its own words and it would have nothing to answer. The note is
 * the one the AI SDK adapter adds (`approvalFollowUpText` in core).
 *
 * @example
 * const [paused] = pausedCodemodeCalls((await agent.getState(config)).values.messages);
 * const outcome = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
 * await agent.invoke({ messages: continueAfterApproval(outcome, paused.message) }, config);
 */
export function continueAfterApproval(
  outcome: DecisionOutcome,
  replaces: ReplacedToolMessage,
  options: { modelOutput?: ModelOutputOptions } = {},
): [ToolMessage, HumanMessage] {
  checkReplacement("continueAfterApproval(outcome, replaces, options)", outcome, replaces, options);
  const message = approvalToolMessage(outcome, replaces, options);
  return [message, new HumanMessage(approvalFollowUpText(outcome, message.name ?? DEFAULT_TOOL_NAME))];
}

/** A Code Mode tool result in a conversation that is waiting for a human. */
export interface PausedCodemodeCall {
  /** The paused tool result; hand it to `approvalToolMessage` to replace it. */
  message: ToolMessage;
  executionId: string;
  /** What waits for approval: every action the run waits on (R-AP-8). */
  pending: PendingAction[];
}

/**
 * The Code Mode tool results in `messages` that are paused, oldest first. The outcome is read
 * from the message's artifact, or from its JSON content when the artifact was not kept: that is
 * what the message says, which a stale message or one a client sent may get wrong. Show a person
 * the actions as `runtime.outcome(executionId)` has them (`codemodeApprovalMiddleware` does).
 *
 * @example
 * for (const paused of pausedCodemodeCalls(state.messages)) console.log(paused.pending[0]);
 */
export function pausedCodemodeCalls(
  messages: readonly BaseMessage[],
  options: { toolName?: string } = {},
): PausedCodemodeCall[] {
  checkArgument("pausedCodemodeCalls(messages, options)", "messages", messages, MESSAGES);
  checkOptions("pausedCodemodeCalls(messages, options)", options, { toolName: STRING });
  const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
  const paused: PausedCodemodeCall[] = [];
  for (const message of messages) {
    if (!ToolMessage.isInstance(message) || message.name !== toolName) continue;
    const outcome = outcomeOf(message);
    if (outcome && outcome.pending.length > 0)
      paused.push({ message, executionId: outcome.executionId, pending: outcome.pending });
  }
  return paused;
}

type PausedOutcome = Extract<Outcome, { status: "paused" }>;

function outcomeOf(message: ToolMessage): Pick<PausedOutcome, "executionId" | "pending"> | undefined {
  const fromArtifact = asPaused(message.artifact);
  if (fromArtifact) return fromArtifact;
  if (typeof message.content !== "string") return undefined;
  try {
    return asPaused(JSON.parse(message.content));
  } catch {
    return undefined;
  }
}

function asPaused(value: unknown): Pick<PausedOutcome, "executionId" | "pending"> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { status, executionId, pending } = value as { status?: unknown; executionId?: unknown; pending?: unknown };
  if (status !== "paused" || typeof executionId !== "string" || !Array.isArray(pending)) return undefined;
  const actions = pending
    .filter(isActionLike)
    .map(({ seq, connector, method, args, description, inputSchema, pauseId }) => ({
      executionId,
      seq,
      connector,
      method,
      args,
      ...(typeof pauseId === "string" ? { pauseId } : {}),
      // Kept from the artifact, for a review screen; the model-facing content has neither.
      ...(typeof description === "string" ? { description } : {}),
      ...(isRecord(inputSchema) ? { inputSchema } : {}),
    }));
  return { executionId, pending: actions };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isActionLike(value: unknown): value is Omit<PendingAction, "executionId"> {
  if (typeof value !== "object" || value === null) return false;
  const { seq, connector, method } = value as Record<string, unknown>;
  return typeof seq === "number" && typeof connector === "string" && typeof method === "string";
}

const REPLACED = {
  expected: "the paused ToolMessage, or its ids { toolCallId, id?, name? }",
  accepts: (value: unknown) =>
    ToolMessage.isInstance(value) ||
    (typeof value === "object" && value !== null && typeof (value as { toolCallId?: unknown }).toolCallId === "string"),
};

function checkReplacement(usage: string, outcome: unknown, replaces: unknown, options: unknown): void {
  checkArgument(usage, "outcome", outcome, OUTCOME);
  checkArgument(usage, "replaces", replaces, REPLACED);
  checkOptions(usage, options, { modelOutput: MODEL_OUTPUT });
}
