// The core's generic execution index (for stores with no native listing) runs the same suite as
// the native ones, over the memory store's Keyv and lock. It is taken from `@codemode/core/store`
// only once that subpath exports it; until then the story says so and is skipped.
import type { ExecutionIndex, KeyvLike, LockProvider } from "@codemode/core/store";
import * as store from "@codemode/core/store";
import { memoryStorage } from "@codemode/storage/memory";
import { runExecutionIndexConformance } from "@codemode/storage/testing";
import { describe, it } from "vitest";

type CreateKeyvExecutionIndex = (keyv: KeyvLike, runtimeName: string, lock: LockProvider) => ExecutionIndex;
const createKeyvExecutionIndex = (store as Record<string, unknown>).createKeyvExecutionIndex as CreateKeyvExecutionIndex | undefined;

if (createKeyvExecutionIndex) {
  runExecutionIndexConformance(
    "createKeyvExecutionIndex(memoryStorage().keyv)",
    () => {
      const storage = memoryStorage();
      return { index: { forRuntime: (name) => createKeyvExecutionIndex(storage.keyv, name, storage.lock) }, close: () => storage.close() };
    },
    { shared: false },
  );
} else {
  describe("createKeyvExecutionIndex(memoryStorage().keyv): execution index conformance", () => {
    it.skip("runs once @codemode/core/store exports createKeyvExecutionIndex", () => undefined);
  });
}
