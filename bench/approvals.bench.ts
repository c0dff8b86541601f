/**
 * Approving 20 refunds, three ways (in-memory store): the cost from `execute` to the completed
 * run, and the passes it took. The baseline (B) is one pause per refund, as a program that awaits
 * each refund in turn gets: 21 passes, 20 approvals. Against it:
 * - a batch: the same 20 refunds issued at once (`Promise.all`) pause together (R-AP-8) and one
 *   `runtime.approve` decides them all: 2 passes;
 * - a grant: the loop as in B, and the first approval grants the 19 refunds after it (R-AP-9):
 *   2 passes.
 * A person's time is not in the figures: each would be 20 clicks against 1. Passes run on the
 * runtime's own thread (`sandboxHost: "inline"`), as before sandbox processes became the default.
 */
import { performance } from "node:perf_hooks";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { type Benchmark, type BenchRow, check, roundOrder, stats } from "./harness.ts";

const REFUNDS = 20;
const WARMUP = 3;
const ROUNDS = WARMUP + 20;

const shop = defineConnector({
  name: "shop",
  tools: {
    refund: { requiresApproval: true, execute: async (args: { n: number }) => ({ refunded: args.n }) },
  },
});

const LOOP = `async () => { const out = []; for (let n = 0; n < ${REFUNDS}; n++) out.push(await shop.refund({ n })); return out.length; }`;
const BATCH = `async () => (await Promise.all(Array.from({ length: ${REFUNDS} }, (_, n) => shop.refund({ n })))).length`;

type Way = "one by one" | "batch" | "grant";

/** Milliseconds from execute to the completed run, and the passes it took. */
async function approveAll(runtime: CodemodeRuntime, way: Way): Promise<{ ms: number; passes: number }> {
  const started = performance.now();
  let outcome: Outcome = await runtime.execute({ code: way === "batch" ? BATCH : LOOP });
  let passes = 1;
  let first = true;
  while (outcome.status === "paused") {
    const { executionId, pending } = outcome;
    outcome =
      way === "grant" && first
        ? await runtime.decide({
            executionId,
            decisions: [{ seq: pending[0]!.seq, decision: "approve", grant: { calls: REFUNDS - 1 } }],
          })
        : await runtime.approve({ executionId });
    first = false;
    passes += 1;
  }
  const ms = performance.now() - started;
  check(
    outcome.status === "completed" && outcome.result === REFUNDS,
    `${way}: ${JSON.stringify(outcome).slice(0, 300)}`,
  );
  return { ms, passes };
}

export const approvalsBenchmark: Benchmark = {
  name: "approvals",
  description: `approving ${REFUNDS} refunds: one pause each (B), one batched pause, one approval with a grant`,
  async run(): Promise<BenchRow[]> {
    const runtime = createCodemodeRuntime({ connectors: [shop], maxExecutions: 1_000, sandboxHost: "inline" });
    const ways: Way[] = ["one by one", "batch", "grant"];
    const samples: Record<Way, number[]> = { "one by one": [], batch: [], grant: [] };
    const passes: Record<Way, number> = { "one by one": 0, batch: 0, grant: 0 };
    try {
      const order = roundOrder(ways);
      for (let round = 0; round < ROUNDS; round++) {
        // Interleaved, in a shuffled order: drift on a shared machine hits every way alike.
        for (const way of order()) {
          const run = await approveAll(runtime, way);
          passes[way] = run.passes;
          if (round >= WARMUP) samples[way].push(run.ms);
        }
      }
    } finally {
      await runtime.close();
    }
    const baseline = stats(samples["one by one"]).median;
    return ways.map((way) => {
      const { median, p90, n } = stats(samples[way]);
      return {
        benchmark: `${REFUNDS} gated refunds, execute to completed (${passes[way]} passes, inline host)`,
        subject:
          way === "one by one"
            ? "B: one pause per refund"
            : way === "batch"
              ? "one batched pause"
              : "one approval with a grant",
        unit: "ms",
        median,
        p90,
        samples: n,
        ratio: median / baseline,
        versus: "B",
      };
    });
  },
};
