/**
 * An outage simulated under the runtime, in the store itself: for a moment the store refuses the
 * write of a call's result and recovers at once, so the run ends `error` with STORAGE_ERROR and a
 * consistent record (R-ST-5). For the rerun stories, in process and from the command line.
 */
import type { LockProvider } from "@codemode/core/store";
import type { CodemodeStorage } from "@codemode/storage";

/** How the simulated outage is armed: the next `refuseWrites` writes that carry a call's result fail. */
export interface Outage {
  refuseWrites: number;
  refused: number;
  /** The write whose tool call arms the outage (`refuseWrites = 1`) as it runs; undefined when not armed. */
  armAt?: number;
}

/**
 * The storage as the runtime sees it, with an outage switch: a write batch that records a call's
 * result (an `applied` entry) is refused while `refuseWrites` > 0, through Keyv and through a
 * lease's fenced write alike; every other read and write goes through.
 */
export function withOutage(storage: CodemodeStorage): { storage: CodemodeStorage; outage: Outage } {
  const outage: Outage = { refuseWrites: 0, refused: 0 };
  const refuse = (values: unknown[]) => {
    if (outage.refuseWrites === 0) return;
    if (!values.some((value) => typeof value === "string" && value.includes('"state":"applied"'))) return;
    outage.refuseWrites -= 1;
    outage.refused += 1;
    throw new Error("the store is down (simulated outage)");
  };
  const keyv = new Proxy(storage.keyv, {
    get(target, property) {
      if (property === "set")
        return async (key: string, value: unknown, ttl?: number) => {
          refuse([value]);
          return target.set(key, value, ttl);
        };
      if (property === "setMany")
        return async (entries: Array<{ key: string; value: unknown }>) => {
          refuse(entries.map((entry) => entry.value));
          return target.setMany(entries);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const lock: LockProvider = {
    isHeld: (key) => storage.lock.isHeld(key),
    async acquire(key, options) {
      const lease = await storage.lock.acquire(key, options);
      const fenced = lease?.setIfHeld;
      if (lease && fenced)
        lease.setIfHeld = async (entries) => {
          refuse(entries.map((entry) => entry.value));
          return fenced(entries);
        };
      return lease;
    },
  };
  return { storage: { keyv, lock, index: storage.index, close: () => storage.close() }, outage };
}
