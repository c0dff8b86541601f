import { randomUUID } from "node:crypto";
import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { afterEach, beforeAll, expect } from "vitest";

/**
 * Registers, in the `describe` it is called in, the hooks every suite over a real backend shares:
 * before the stories it asks `unavailable` why the backend cannot be reached (a reason fails the
 * suite when `CI` is set, since CI must provide the backend), and after each story it runs
 * `cleanUp`. Returns `cannotRun`, which each story calls first.
 *
 * @example
 * describe("redisStorage on a real Redis", () => {
 *   const cannotRun = suiteHooks(`Redis at ${url}`, () => tcpUnreachable(url));
 *   it("...", async () => {
 *     if (cannotRun()) return;
 *   });
 * });
 */
export function suiteHooks(
  name: string,
  unavailable: (() => Promise<string | undefined> | string | undefined) | undefined,
  cleanUp?: () => Promise<void>,
): () => boolean {
  let unavailableBecause: string | undefined;
  beforeAll(async () => {
    unavailableBecause = await unavailable?.();
    if (unavailableBecause && process.env.CI)
      throw new Error(`${name} is not reachable (${unavailableBecause}); CI must provide it`);
  });
  if (cleanUp) afterEach(cleanUp);
  /** True (after printing why) when the backend is not there and this is not CI. */
  return () => {
    if (!unavailableBecause) return false;
    console.warn(`${name}: story not run: ${unavailableBecause}`);
    return true;
  };
}

/** Closes and forgets everything in `opened`, in order; a close that fails is ignored, the story being over. */
export async function closeAll(opened: Array<{ close(): Promise<unknown> }>): Promise<void> {
  for (const each of opened.splice(0)) await each.close().catch(() => undefined);
}

export function expectStatus<S extends Outcome["status"]>(
  outcome: Outcome,
  status: S,
): asserts outcome is Extract<Outcome, { status: S }> {
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome).slice(0, 600)}`);
}

/**
 * R-ST-5 on a runtime whose store cannot be reached: running `code` and approving an execution
 * both end in STORAGE_ERROR, never NOT_FOUND.
 */
export async function expectStorageErrors(runtime: CodemodeRuntime, code: string): Promise<void> {
  const executed = await runtime.execute({ code });
  expectStatus(executed, "error");
  expect(executed.code).toBe("STORAGE_ERROR");
  const approved = await runtime.approve({ executionId: randomUUID() });
  expectStatus(approved, "error");
  expect(approved.code).toBe("STORAGE_ERROR");
}

/** A runtime name (or any key part) that no other story uses: `<prefix>-` and eight hex digits. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
