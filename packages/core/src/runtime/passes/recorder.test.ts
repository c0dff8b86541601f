import { describe, expect, it, vi } from "vitest";
import type { ExecutionStore } from "../../log/execution-store.js";
import type { ExecutionHead, StoredEntry, StoreWriter } from "../../log/interface.js";
import { PassRecorder } from "./recorder.js";

/** A store that records the order batches land in, each after an optional delay per seq. */
function fakeStore(delays: Record<number, number> = {}, failing: Set<number> = new Set()) {
  const landed: string[] = [];
  const describe = (entries: StoredEntry[]) => entries.map((entry) => `${entry.seq}:${entry.state}`).join(",");
  // Each write goes through the writer (the lease), as the real store's do.
  const store = {
    async writeEntries(writer: StoreWriter, _id: string, entries: StoredEntry[]) {
      await writer.write([], async () => {
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, ...entries.map((entry) => delays[entry.seq] ?? 0))),
        );
        const refused = entries.find((entry) => failing.has(entry.seq));
        if (refused) throw new Error(`write of ${refused.seq} refused`);
        landed.push(`entries ${describe(entries)}`);
      });
    },
    async writeHead(
      writer: StoreWriter,
      head: ExecutionHead,
      extra: { entries?: StoredEntry[]; renew?: boolean } = {},
    ) {
      await writer.write(
        [],
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          landed.push(`head limit ${head.seqLimit} + ${describe(extra.entries ?? [])}`);
        },
        { renew: extra.renew ?? false },
      );
    },
  };
  return { store: store as unknown as ExecutionStore, landed };
}

const head = (seqLimit: number): ExecutionHead => ({
  id: "e1",
  status: "running",
  createdAt: 1,
  updatedAt: 1,
  connectors: [],
  seqLimit,
  deterministic: true,
  seed: "e1",
  clockMs: 1,
  passes: 1,
});
const entry = (seq: number, state: StoredEntry["state"] = "executing"): StoredEntry => ({
  seq,
  connector: "shop",
  method: "read",
  args: "",
  requiresApproval: false,
  state,
  startedAt: 1,
});

/** A lease that always holds: every write goes out as it is. */
const holding: StoreWriter = { write: (_batch, plain) => plain() };
/** A lease lost before the write (`onRenew` only: lost when the write asks for a renew). */
const lost = (onRenew = false): StoreWriter => ({
  write: async (_batch, plain, options) => {
    if (!onRenew || options?.renew) throw new Error("taken over");
    await plain();
  },
});

/** A recorder over `store` whose lease always holds and whose deferred failures go nowhere. */
const recorderOn = (store: ExecutionStore, seqLimit: number) =>
  new PassRecorder(store, head(seqLimit), new Map(), holding, () => undefined);

describe("PassRecorder: the write order replay depends on", () => {
  it("R-ST-1: an entry below the stored limit is written alone; a new seq beyond it raises the limit with the head, fenced first", async () => {
    const { store, landed } = fakeStore();
    const fences: number[] = [];
    const renewing: StoreWriter = {
      write: async (_batch, plain, options) => {
        if (options?.renew) fences.push(landed.length);
        await plain();
      },
    };
    const recorder = new PassRecorder(store, head(32), new Map(), renewing, () => undefined);
    await recorder.record(entry(3));
    await recorder.record(entry(32));
    await recorder.record(entry(33));
    expect(landed).toEqual(["entries 3:executing", "head limit 64 + 32:executing", "entries 33:executing"]);
    expect(fences).toEqual([1]);
  });

  it("a write that depends on a raised limit waits for the head that raises it", async () => {
    const { store, landed } = fakeStore();
    const recorder = recorderOn(store, 0);
    // Issued together, as Promise.all would: seq 1 must not land before the head with limit 32.
    await Promise.all([recorder.record(entry(0)), recorder.record(entry(1))]);
    expect(landed).toEqual(["head limit 32 + 0:executing", "entries 1:executing"]);
  });

  it("a deferred result lands with or before anything recorded after it, even when it is slower", async () => {
    const { store, landed } = fakeStore({ 4: 30 });
    const recorder = recorderOn(store, 32);
    recorder.recordLater(entry(4, "applied"));
    await recorder.record(entry(5));
    // One batch, the deferred result first: a store applying a batch in order keeps the prefix.
    expect(landed).toEqual(["entries 4:applied,5:executing"]);
  });

  it("one batch in flight at a time: what is recorded meanwhile goes together in the next one, in record order", async () => {
    const { store, landed } = fakeStore({ 1: 20 });
    const recorder = recorderOn(store, 32);
    const first = recorder.record(entry(1));
    // Batch 1 is in flight now (the store answers later): what follows waits for it.
    recorder.recordLater(entry(7, "applied"));
    const rest = Promise.all([recorder.record(entry(2)), recorder.record(entry(3))]);
    await Promise.all([first, rest]);
    expect(landed).toEqual(["entries 1:executing", "entries 7:applied,2:executing,3:executing"]);
  });

  it("a result recorded later lands on its own shortly after, without a drain", async () => {
    const { store, landed } = fakeStore();
    const recorder = recorderOn(store, 32);
    recorder.recordLater(entry(0, "applied"));
    recorder.recordLater(entry(1, "applied"));
    expect(landed).toEqual([]);
    await vi.waitFor(() => expect(landed).toEqual(["entries 0:applied,1:applied"]), { timeout: 5_000, interval: 5 });
  });

  it("a seq recorded twice before its batch leaves is written once, with its last state", async () => {
    const { store, landed } = fakeStore({ 0: 10 });
    const recorder = recorderOn(store, 32);
    const first = recorder.record(entry(0));
    recorder.recordLater(entry(5));
    recorder.recordLater(entry(5, "applied"));
    await first;
    await recorder.drain();
    expect(landed).toEqual(["entries 0:executing", "entries 5:applied"]);
  });

  it("a deferred write that fails is reported once and every entry lands in the log map", async () => {
    const failures: unknown[] = [];
    const log = new Map<number, StoredEntry>();
    const { store } = fakeStore({}, new Set([6]));
    const recorder = new PassRecorder(store, head(32), log, holding, (error) => void failures.push(error));
    recorder.recordLater(entry(6, "applied"));
    await recorder.drain();
    expect(failures.map((error) => (error as Error).message)).toEqual(["write of 6 refused"]);
    expect(log.get(6)?.state).toBe("applied");
  });

  it("R-ST-4: a lost lease stops the head write, so a taken-over pass never rewrites the record", async () => {
    const { store, landed } = fakeStore();
    const recorder = new PassRecorder(store, head(0), new Map(), lost(true), () => undefined);
    await expect(recorder.record(entry(0))).rejects.toThrow("taken over");
    expect(landed).toEqual([]);
  });

  it("R-ST-6: once the lease is lost, no batch goes out, not even entries below the stored limit (a stalled process woke up)", async () => {
    const { store, landed } = fakeStore();
    const failures: unknown[] = [];
    const recorder = new PassRecorder(store, head(32), new Map(), lost(), (error) => void failures.push(error));
    await expect(recorder.record(entry(3))).rejects.toThrow("taken over");
    recorder.recordLater(entry(3, "applied"));
    await recorder.drain();
    expect(failures.map((error) => (error as Error).message)).toEqual(["taken over"]);
    expect(landed).toEqual([]);
  });
});
