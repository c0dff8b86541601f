// What plain JavaScript can hand this package wrong, checked when a function is called: the
// checks all adapters share live in @codemode/core/adapters (check-argument.ts); these are the AI
// SDK's own.
import { describeValue, type Expectation, RECORD, runtimeWith } from "@codemode/core/adapters";

export const MODEL_MESSAGES: Expectation = { expected: "an array of model messages", accepts: Array.isArray };
export const UI_MESSAGES: Expectation = {
  expected: "an array of UI messages (useChat's messages)",
  accepts: Array.isArray,
};

const APPROVAL_RUNTIME = runtimeWith("execute");

/**
 * `codemodeToolApproval`'s argument. The AI SDK calls a `toolApproval` entry with the tool call's
 * input (`{ code }`) or, as the generic function, with `{ toolCall, messages, … }`: getting one of
 * those means the factory itself was handed to the AI SDK, uncalled.
 */
export function checkApprovalRuntime(value: unknown): void {
  if (APPROVAL_RUNTIME.accepts(value)) return;
  const howTo =
    "Call it with your runtime: `toolApproval: { codemode: codemodeToolApproval(runtime) }` (or `toolApproval: codemodeToolApproval(runtime)`)";
  const record = RECORD.accepts(value) ? (value as Record<string, unknown>) : undefined;
  if (record && (typeof record.code === "string" || RECORD.accepts(record.toolCall)))
    throw new TypeError(
      `codemodeToolApproval was given to the AI SDK uncalled, so the AI SDK called it with the tool call (${describeValue(value)}) instead of a runtime. ${howTo}.`,
    );
  throw new TypeError(
    `codemodeToolApproval(runtime): runtime must be ${APPROVAL_RUNTIME.expected}; got ${describeValue(value)}. ${howTo}.`,
  );
}
