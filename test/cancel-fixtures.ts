/**
 * What the cancel tests share: a runtime over a fresh namespace of the store whose `jobs.wait`
 * waits until its signal aborts, closed after each test; and a wait for a condition to hold.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
} from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { closedAfterEach, type Store, serviceCheck } from "./four-stores-fixtures.ts";

/**
 * Within a store's describe: the check that skips (or, in CI, fails) when the store's service is
 * missing, `jobsRuntime`, whose runtimes and storages are closed after each test, and `statusOf`.
 */
export function useJobs(store: Store) {
  const cannotRun = serviceCheck(store);
  const opened = closedAfterEach();
  /** A runtime whose `jobs.wait` waits until its signal aborts (or 60 s); `seen` has what the tool saw. */
  function jobsRuntime(options: Partial<CodemodeRuntimeOptions> & { storage?: CodemodeStorage } = {}) {
    const storage = options.storage ?? store.open(`codemode-cancel-${randomUUID().slice(0, 8)}`);
    if (!options.storage) opened.push(storage);
    const seen = { started: 0, aborted: [] as string[], deadlines: [] as number[] };
    const jobs = defineConnector({
      name: "jobs",
      tools: {
        wait: {
          execute: (_args: unknown, context) =>
            new Promise((resolve, reject) => {
              seen.started++;
              if (context.deadline !== undefined) seen.deadlines.push(context.deadline);
              const timer = setTimeout(() => resolve("done"), 60_000);
              context.signal?.addEventListener("abort", () => {
                clearTimeout(timer);
                seen.aborted.push(String(context.signal?.reason));
                reject(new Error("stopped: the run was cancelled"));
              });
            }),
        },
        pay: { requiresApproval: true, execute: () => "paid" },
      },
    });
    const runtime = createCodemodeRuntime({
      connectors: [jobs],
      storage,
      logger: { warn() {} },
      limits: { timeoutMs: 30_000 },
      ...options,
    });
    opened.unshift(runtime);
    return { runtime, seen, storage };
  }

  async function statusOf(runtime: CodemodeRuntime, executionId: string) {
    return (await runtime.execution(executionId))?.status;
  }
  return { cannotRun, jobsRuntime, statusOf };
}

/** Resolves once `check` holds; throws after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await sleep(20);
  }
}
