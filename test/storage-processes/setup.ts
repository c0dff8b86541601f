/**
 * What the storage process stories share within one store's describe: two workers started before
 * the stories (after checking the packages are built and the store is reachable), the extra
 * workers a story starts, all stopped after; and the program they race on.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import type { Backend } from "./backends.ts";
import { Worker } from "./worker-process.ts";

const BUILT = [
  fileURLToPath(new URL("../../packages/core/dist/index.js", import.meta.url)),
  fileURLToPath(new URL("../../packages/storage/dist/index.js", import.meta.url)),
];
/** Lease of the worker that gets killed, so that its run's lease lapses quickly. */
export const SHORT_LEASE_MS = 1_500;

/** Reads, then applies (needs approval). */
export const readThenApply = `async () => { const first = await ledger.read({ i: 0 }); const done = await ledger.apply({ item: "item-" + first.i }); return done; }`;

/** The describe's workers: `first` and `second` are there once its beforeAll has run. */
export interface SharedWorkers {
  backend: Backend;
  first: Worker;
  second: Worker;
  /** Workers a story started, killed after the describe. */
  extra: Worker[];
  /** True (and says why) when the store is not reachable and the story does not run. */
  cannotRun(): boolean;
  /** A fresh runtime name, so that each story's runs are its own. */
  runtimeName(): string;
}

/** Within a store's describe: starts `first` and `second` before its stories, stops every worker after. */
export function useWorkers(backend: Backend): SharedWorkers {
  let unavailable: string | undefined;
  const extra: Worker[] = [];
  const shared: SharedWorkers = {
    backend,
    first: undefined as unknown as Worker,
    second: undefined as unknown as Worker,
    extra,
    cannotRun: () => {
      if (!unavailable) return false;
      console.warn(`story not run: ${backend.label} is not reachable (${unavailable})`);
      return true;
    },
    runtimeName: () => `processes-${randomUUID().slice(0, 8)}`,
  };

  beforeAll(async () => {
    const missing = BUILT.filter((file) => !existsSync(file));
    if (missing.length > 0)
      throw new Error(
        `these tests run the built packages; run \`npm run build\` first (missing ${missing.join(", ")})`,
      );
    unavailable = await backend.unavailable();
    if (unavailable) {
      if (process.env.CI) throw new Error(`${backend.label} is not reachable (${unavailable}); CI must provide it`);
      return;
    }
    await backend.setUp();
    [shared.first, shared.second] = await Promise.all([
      Worker.start(backend.config("first")),
      Worker.start(backend.config("second")),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([shared.first?.stop(), shared.second?.stop(), ...extra.map((worker) => worker.kill())]);
    if (!unavailable) await backend.tearDown();
  });
  return shared;
}
