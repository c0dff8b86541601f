/**
 * The stories of the storage process tests (test/storage-processes-*.test.ts), one store at a
 * time: the workers (setup.ts) race decisions (racing-stories.ts) and hand runs over
 * (recovery-stories.ts) on a shared store (backends.ts).
 */
import { describe } from "vitest";
import { BACKENDS } from "./backends.ts";
import { racingStories } from "./racing-stories.ts";
import { recoveryStories } from "./recovery-stories.ts";
import { useWorkers } from "./setup.ts";

/**
 * The stories on one store: each store has its own test file (test/storage-processes-*.test.ts),
 * so the three run side by side.
 */
export function storageProcessStories(kind: keyof typeof BACKENDS): void {
  const backend = BACKENDS[kind]();
  describe(`worker processes sharing ${backend.label}`, () => {
    const shared = useWorkers(backend);
    racingStories(shared);
    recoveryStories(shared);
  });
}
