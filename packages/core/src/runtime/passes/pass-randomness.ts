import { randomBytes } from "node:crypto";
import type { ExecutionHead } from "../../log/interface.js";
import type { PassRequest } from "../../sandbox/executor.js";

/**
 * The head of an execution started since issue 17.10: it carries a secret seed for the sandbox's
 * replay-stable randomness (R-SB-6). Its `seed` stays the execution id, which every outcome
 * shows: randomness seeded from it let anyone who saw an outcome recompute a token the program
 * drew with `crypto.randomUUID()`. The secret is kept in the record only; no outcome, listing or
 * log entry carries it.
 */
export type SeededHead = ExecutionHead & { secretSeed?: string };

/** 256 random bits, fresh for each execution. */
export function newSecretSeed(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * The replay-stable clock and randomness of a pass. A head with a secret seed hands it to the
 * executor as `keyed`: the sandbox never sees it, only values derived from it. An execution
 * started before keeps its old seed (its execution id) and the old generator, so it replays.
 */
export function passDeterminism(head: SeededHead): PassRequest["deterministic"] {
  if (!head.deterministic) return false;
  if (typeof head.secretSeed === "string" && head.secretSeed !== "")
    return { seed: head.secretSeed, clockMs: head.clockMs, keyed: true };
  return { seed: head.seed, clockMs: head.clockMs };
}
