import { createInProcessLock, type KeyvLike } from "@codemode/core/store";
import Keyv from "keyv";
import type { CodemodeStorage } from "../storage.js";
import { createMemoryExecutionIndex } from "./memory-execution-index.js";

/**
 * A store in this process's memory, with the in-process lock: for tests, demos and single-process
 * tools that need nothing to survive a restart. It is what the runtime uses when given no
 * storage, packaged like the other stores so code can switch between them. After `close()` every
 * operation fails, as a closed connection would.
 *
 * @example
 * import { memoryStorage } from "@codemode/storage/memory";
 * const runtime = createCodemodeRuntime({ connectors: [github], storage: memoryStorage() });
 */
export function memoryStorage(): CodemodeStorage {
  const store = new MemoryStore();
  // Records stay objects: nothing leaves the process, and the runtime's values are text already.
  const keyv = new Keyv({ store, throwOnErrors: true, serialize: undefined, deserialize: undefined });
  keyv.on("error", () => {
    // Failures reject the call that met them (throwOnErrors); this listener only keeps Keyv quiet.
  });
  const index = createMemoryExecutionIndex();
  return {
    keyv: keyv as Keyv & KeyvLike,
    lock: createInProcessLock(),
    index: { forRuntime: (runtimeName) => index.forRuntime(runtimeName) },
    async close() {
      store.close();
      index.close();
    },
  };
}

/** A Map with the batch methods Keyv looks for, that refuses work once closed. */
class MemoryStore {
  private readonly data = new Map<string, unknown>();
  private closed = false;
  namespace?: string;

  close(): void {
    this.closed = true;
    this.data.clear();
  }

  private open(): Map<string, unknown> {
    if (this.closed) throw new Error("the memory storage is closed");
    return this.data;
  }

  async get(key: string): Promise<unknown> {
    return this.open().get(key);
  }

  async getMany(keys: string[]): Promise<unknown[]> {
    const data = this.open();
    return keys.map((key) => data.get(key));
  }

  async set(key: string, value: unknown): Promise<boolean> {
    this.open().set(key, value);
    return true;
  }

  async setMany(entries: Array<{ key: string; value: unknown }>): Promise<boolean[]> {
    const data = this.open();
    for (const entry of entries) data.set(entry.key, entry.value);
    return entries.map(() => true);
  }

  async delete(key: string): Promise<boolean> {
    return this.open().delete(key);
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    const data = this.open();
    let any = false;
    for (const key of keys) any = data.delete(key) || any;
    return any;
  }

  async has(key: string): Promise<boolean> {
    return this.open().has(key);
  }

  async clear(): Promise<void> {
    const data = this.open();
    if (!this.namespace) return data.clear();
    for (const key of [...data.keys()]) if (key.startsWith(`${this.namespace}:`)) data.delete(key);
  }
}
