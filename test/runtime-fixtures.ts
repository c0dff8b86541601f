/**
 * Runtimes a test opened, closed after it: `keep` remembers a runtime, `closeKeptRuntimesAfterEach`
 * (called once per test file) closes every one kept during each test. The story fixtures
 * (approvals, replay, lifecycle, storage) keep the runtimes their setups make through it.
 */
import type { CodemodeRuntime } from "@codemode/core";
import { afterEach } from "vitest";

const kept: CodemodeRuntime[] = [];

/** Remembers `runtime` to be closed after the test; answers it. */
export function keep<R extends CodemodeRuntime>(runtime: R): R {
  kept.push(runtime);
  return runtime;
}

/** After each test of the file, closes every runtime kept during it. */
export function closeKeptRuntimesAfterEach(): void {
  afterEach(async () => {
    await Promise.all(kept.splice(0).map((runtime) => runtime.close()));
  });
}
