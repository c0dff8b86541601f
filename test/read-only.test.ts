/**
 * The write path's fast lanes, through the public API over a Keyv store that records every write
 * in the order it reaches the adapter: read-only tools (`readOnly: true`) skip the write-ahead
 * entry, and results recorded without waiting may share a batch with what comes next, never landing
 * after it. Crash stories (a host killed inside a read-only call) are in test/recover-*.test.ts.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";

/** A Map adapter that keeps, in arrival order, the log entries written: "seq:state". */
class WriteOrderStore extends Map<string, unknown> {
  readonly entryWrites: string[] = [];

  override set(key: string, value: unknown): this {
    this.note([{ key, value }]);
    return super.set(key, value);
  }

  setMany(entries: Array<{ key: string; value: unknown }>): void {
    this.note(entries);
    for (const { key, value } of entries) super.set(key, value);
  }

  private note(entries: Array<{ key: string; value: unknown }>): void {
    const batch: string[] = [];
    for (const { key, value } of entries) {
      if (!/:e:[^:]+:\d+$/.test(key)) continue;
      const text = typeof value === "string" ? value : JSON.stringify(value);
      const stored = JSON.parse((JSON.parse(text) as { value: string }).value ?? text) as {
        seq: number;
        state: string;
      };
      batch.push(`${stored.seq}:${stored.state}`);
    }
    this.entryWrites.push(...batch);
  }
}

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function shopRuntime(store: WriteOrderStore, calls: string[]) {
  const shop = defineConnector({
    name: "shop",
    tools: {
      price: {
        readOnly: true,
        execute: async (args: { sku: string }) => {
          calls.push(`price ${args.sku}`);
          return { sku: args.sku, cents: 250 };
        },
      },
      order: {
        execute: async (args: { sku: string }) => {
          calls.push(`order ${args.sku}`);
          return { ordered: args.sku };
        },
      },
      refund: {
        readOnly: true,
        requiresApproval: true,
        execute: async () => {
          calls.push("refund");
          return { refunded: true };
        },
      },
    },
  });
  const runtime = createCodemodeRuntime({ connectors: [shop], storage: new Keyv({ store }) });
  runtimes.push(runtime);
  return runtime;
}

describe("readOnly tools: one write per call, the same replay", () => {
  it("R-RP-4 fast path: a new read-only call is recorded once (applied), a call that changes things twice (executing, then applied)", async () => {
    const store = new WriteOrderStore();
    const calls: string[] = [];
    const runtime = shopRuntime(store, calls);
    const outcome = await runtime.execute({
      code: "async () => { const a = await shop.price({ sku: 'a' }); const b = await shop.price({ sku: 'b' }); await shop.order({ sku: 'c' }); return a.cents + b.cents; }",
    });
    expect(outcome.status).toBe("completed");
    expect(store.entryWrites).toEqual(["0:applied", "1:applied", "2:executing", "2:applied"]);
    expect(calls).toEqual(["price a", "price b", "order c"]);
  });

  it("R-RP-2, R-RP-3: read-only calls replay from the log after a pause; they do not run again", async () => {
    const store = new WriteOrderStore();
    const calls: string[] = [];
    const runtime = shopRuntime(store, calls);
    const paused = await runtime.execute({
      code: "async () => { const a = await shop.price({ sku: 'a' }); const r = await shop.refund({}); return { a, r }; }",
    });
    expect(paused.status).toBe("paused");
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: { a: { sku: "a", cents: 250 }, r: { refunded: true } } });
    // A read-only tool that needs approval still pauses with a pending entry, then runs once.
    expect(calls).toEqual(["price a", "refund"]);
    const state = await runtime.execution(paused.executionId);
    expect(state?.log.map((entry) => `${entry.seq} ${entry.method} ${entry.state}`)).toEqual([
      "0 price applied",
      "1 refund applied",
    ]);
  });

  it("R-RP-2: a read-only call whose arguments come from replay-stable values replays without divergence", async () => {
    const store = new WriteOrderStore();
    const runtime = shopRuntime(store, []);
    const paused = await runtime.execute({
      code: "async () => { await shop.price({ sku: String(Math.random()) }); return shop.refund({}); }",
    });
    expect(paused.status).toBe("paused");
    // Math.random is replay-stable: the same program replays without divergence.
    expect((await runtime.approve({ executionId: paused.executionId })).status).toBe("completed");
  });
});

describe("results recorded without waiting: the order replay depends on", () => {
  it("every entry reaches the store after every entry of a lower seq was recorded, and a result never after a later write-ahead", async () => {
    const store = new WriteOrderStore();
    const calls: string[] = [];
    const runtime = shopRuntime(store, calls);
    const code = `async () => {
      let total = 0;
      for (let i = 0; i < 40; i++) {
        const p = await shop.price({ sku: 's' + i });
        total += p.cents;
        if (i % 5 === 4) await shop.order({ sku: 's' + i });
      }
      return total;
    }`;
    const outcome = await runtime.execute({ code });
    expect(outcome).toMatchObject({ status: "completed", result: 40 * 250 });
    // Writes arrive in seq order: each seq's last write comes before any write of a higher seq.
    const seqs = store.entryWrites.map((write) => Number(write.split(":")[0]));
    for (let index = 1; index < seqs.length; index++) expect(seqs[index]!).toBeGreaterThanOrEqual(seqs[index - 1]!);
    // 40 prices (one write each) and 8 orders (two each).
    expect(store.entryWrites).toHaveLength(40 + 8 * 2);
    expect(store.entryWrites.filter((write) => write.endsWith(":executing"))).toHaveLength(8);
  });

  it("a result recorded without waiting reaches the store before the next call's write-ahead (alone, or first in one batch with it)", async () => {
    const store = new WriteOrderStore();
    const runtime = shopRuntime(store, []);
    const outcome = await runtime.execute({
      code: "async () => { await shop.order({ sku: 'a' }); await shop.order({ sku: 'b' }); return 1; }",
    });
    expect(outcome.status).toBe("completed");
    // Whether the result waited for company depends on timing (it waits at most 1 ms); the order
    // does not. recorder.test.ts pins the shared batch itself.
    expect(store.entryWrites).toEqual(["0:executing", "0:applied", "1:executing", "1:applied"]);
  });

  it("Promise.all over read-only and other calls records each seq once, with its final state", async () => {
    const store = new WriteOrderStore();
    const calls: string[] = [];
    const runtime = shopRuntime(store, calls);
    const outcome = await runtime.execute({
      code: "async () => { const r = await Promise.all([shop.price({ sku: 'a' }), shop.order({ sku: 'b' }), shop.price({ sku: 'c' })]); return r.length; }",
    });
    expect(outcome).toMatchObject({ status: "completed", result: 3 });
    const state = await runtime.execution(outcome.executionId);
    expect(state?.log.map((entry) => `${entry.seq} ${entry.method} ${entry.state}`)).toEqual([
      "0 price applied",
      "1 order applied",
      "2 price applied",
    ]);
    expect(store.entryWrites.filter((write) => write.startsWith("0:") || write.startsWith("2:"))).toEqual(
      expect.arrayContaining(["0:applied", "2:applied"]),
    );
    expect(store.entryWrites.filter((write) => write === "0:executing" || write === "2:executing")).toEqual([]);
  });
});

describe("readOnly is checked when the runtime is created", () => {
  it("a readOnly that is not a boolean is a configuration error naming the tool", () => {
    expect(() =>
      defineConnector({
        name: "shop",
        tools: { price: { readOnly: "yes" as unknown as boolean, execute: async () => 1 } },
      }),
    ).toThrow(/shop\.price.*readOnly/);
  });
});
