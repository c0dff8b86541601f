// What plain JavaScript can hand this package wrong, checked when a function is called: the
// checks all adapters share live in @codemode/core/adapters (check-argument.ts); these are
// LangChain's own.
import type { Expectation } from "@codemode/core/adapters";

export const FUNCTION: Expectation = { expected: "a function", accepts: (value) => typeof value === "function" };
export const MESSAGES: Expectation = { expected: "an array of LangChain messages", accepts: Array.isArray };
