import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { createOutcomeMemo, type OutcomeMemo } from "@codemode/core/adapters";

// One memo per runtime, shared by its Code Mode tools and approval functions.
const prerunOutcomes = new WeakMap<CodemodeRuntime, OutcomeMemo>();

/**
 * The outcomes of code run while the AI SDK asked whether a call needs approval, by tool call id
 * and code: a provider that reuses ids across conversations still never gets another's outcome.
 * `start` runs it: the code itself, or a model tool's direct call (`runtime.callTool`).
 */
export function prerun(
  runtime: CodemodeRuntime,
  toolCallId: string,
  code: string,
  start: () => Promise<Outcome> = () => runtime.execute({ code }),
) {
  let memo = prerunOutcomes.get(runtime);
  if (!memo) {
    memo = createOutcomeMemo();
    prerunOutcomes.set(runtime, memo);
  }
  const key = `${toolCallId}\n${code}`;
  return { run: () => memo.run(key, start), take: () => memo.take(key) };
}
