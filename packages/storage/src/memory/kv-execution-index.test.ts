// The core's generic execution index (for stores with no native listing) runs the same suite as
// the native ones, over the memory store's Keyv and lock.
import { createKeyvExecutionIndex } from "@codemode/core/store";
import { memoryStorage } from "@codemode/storage/memory";
import { runExecutionIndexConformance } from "@codemode/storage/testing";

runExecutionIndexConformance(
  "createKeyvExecutionIndex(memoryStorage().keyv)",
  () => {
    const storage = memoryStorage();
    return {
      index: { forRuntime: (name) => createKeyvExecutionIndex(storage.keyv, name, storage.lock) },
      close: () => storage.close(),
    };
  },
  { shared: false },
);
