import { INITIAL_MEMORY_BYTES, newQuickJsModule, type QuickJsModule } from "./quickjs-module.js";

/** A module instance as the pool lends it: to one pass at a time. */
export interface PooledModule {
  module: QuickJsModule;
  /** The memory limit of the passes it serves, in bytes (at least the module's initial memory). */
  limitBytes: number;
  /** The partition (`PassRequest.partition`) it serves. */
  partition: string;
  /** Passes it has served, the current one included. */
  passes: number;
}

export interface ModulePool {
  /** A module for one pass with `memoryLimitBytes` in `partition`: an idle one of theirs, or a new one. */
  take(memoryLimitBytes: number, partition: string): Promise<PooledModule>;
  /** The pass has ended; `reusable` when it ended normally and its runtime was freed. */
  release(pooled: PooledModule, reusable: boolean): void;
  /** Drops the idle modules and keeps none from then on; later passes get new ones. */
  close(): void;
  /** Modules not yet dropped (lent or idle), modules made, and passes that ran in a module used before. */
  stats(): { modulesLive: number; modulesCreated: number; passesReused: number; modulesDropped: number };
}

/** Idle modules kept for later passes, all partitions together. */
const MAX_IDLE_MODULES = 4;

/**
 * Module instances for passes, each lent to one pass at a time. Why not one module for every
 * pass, as QuickJS allows: in this build QuickJS cannot tell how large a block is, so its own
 * memory limit counts allocations rather than bytes, and only the module's linear memory says
 * what a pass uses. That memory never shrinks, and it is the module's, not the runtime's: lent to
 * one pass at a time, its size bounds that pass (see QuickJsWatchdog). A module also dies with
 * the host's stack overflowing inside it, which should take no other pass with it.
 *
 * A module is used again only by a pass of the same partition and memory limit, only while its
 * memory has not grown past its initial size (so the next pass starts with what a new module
 * has), and for at most `maxPasses` passes.
 */
export function createModulePool(maxPasses: number): ModulePool {
  const idle: PooledModule[] = [];
  let lent = 0;
  let created = 0;
  let reused = 0;
  let dropped = 0;
  let closed = false;

  return {
    async take(memoryLimitBytes, partition) {
      const limitBytes = Math.max(memoryLimitBytes, INITIAL_MEMORY_BYTES);
      const index = idle.findIndex((pooled) => pooled.partition === partition && pooled.limitBytes === limitBytes);
      if (index >= 0) {
        const [pooled] = idle.splice(index, 1);
        pooled!.passes++;
        reused++;
        lent++;
        return pooled!;
      }
      // Memory beyond the limit, so that a program going over it is seen going over it, rather
      // than stopped by a failed allocation it may catch (see QuickJsWatchdog.checkMemory).
      const module = await newQuickJsModule(limitBytes + Math.max(INITIAL_MEMORY_BYTES, limitBytes / 4));
      created++;
      lent++;
      return { module, limitBytes, partition, passes: 1 };
    },
    release(pooled, reusable) {
      lent--;
      const grown = pooled.module.memory.buffer.byteLength > INITIAL_MEMORY_BYTES;
      if (closed || !reusable || grown || pooled.passes >= maxPasses) {
        dropped++;
        return;
      }
      idle.push(pooled);
      // The oldest idle module goes first.
      if (idle.length > MAX_IDLE_MODULES) {
        idle.shift();
        dropped++;
      }
    },
    close() {
      closed = true;
      dropped += idle.length;
      idle.length = 0;
    },
    stats: () => ({
      modulesLive: lent + idle.length,
      modulesCreated: created,
      passesReused: reused,
      modulesDropped: dropped,
    }),
  };
}
