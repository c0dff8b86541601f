import type { CodemodeRuntime } from "@codemode/core";
import { createOutcomeMemo, type OutcomeMemo } from "@codemode/core/adapters";

// One memo per runtime, shared by its Code Mode tools and approval functions.
const prerunOutcomes = new WeakMap<CodemodeRuntime, OutcomeMemo>();

/**
 * The outcomes of code run while the AI SDK asked whether a call needs approval, by tool call id
 * and code: a provider that reuses ids across conversations still never gets another's outcome.
 */
export function prerun(runtime: CodemodeRuntime, toolCallId: string, code: string) {
  let memo = prerunOutcomes.get(runtime);
  if (!memo) {
    memo = createOutcomeMemo();
    prerunOutcomes.set(runtime, memo);
  }
  const key = `${toolCallId}\n${code}`;
  return { run: () => memo.run(key, () => runtime.execute({ code })), take: () => memo.take(key) };
}
