/**
 * The durable runtime over Redis (SPEC §15: per connector call ≤ 2.5× a Redis SET round trip).
 *
 * Per connector call: passes of N sequential awaited calls minus passes of 0 calls, divided by
 * N, through `runtime.execute` on `redisStorage`. Baseline, interleaved in the same run: N
 * sequential awaited `SET`s of a log-entry-sized value on a plain node-redis client, minus
 * nothing (a SET loop has no fixed cost to remove), divided by N. Two runtimes: `bench.echo`
 * declared `readOnly` (one write per call, which the program does not wait for; at most one
 * batch in flight) and the same tool undeclared (the `executing` entry is written ahead of the
 * call and waited for, and the `applied` entry rides in the same batch as the next write-ahead).
 * Every log write of the runtime is a guarded write: one script that checks the execution's lease
 * and sets the keys (docs/storage.md, "Fencing"). A row measures that script alone, through a
 * lease of `redisStorage`, against the plain SET; and B rows run the same programs with the
 * lease's guarded write hidden (the lease checked before each plain write, as before guarded
 * writes), interleaved, so that the guarded rows' ratios against B are the cost of guarding.
 *
 * Passes run on the runtime's own thread (`sandboxHost: "inline"`), as when the target was set:
 * these rows measure the durable path, not the hop to a sandbox process (bench/hosts.bench.ts).
 *
 * Needs Redis at $CODEMODE_REDIS_URL (default redis://127.0.0.1:6379); everything it writes is
 * deleted afterwards.
 */
import { randomUUID } from "node:crypto";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { LockProvider } from "@codemode/core/store";
import { redisStorage } from "@codemode/storage/redis";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import { type Benchmark, type BenchRow, check, perCallCost, sampleInterleaved, stats } from "./harness.ts";
import { sequentialCalls } from "./programs.ts";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const CALLS = 200;

async function perCallOverRedis(): Promise<BenchRow[]> {
  const unreachable = await tcpUnreachable(REDIS_URL);
  if (unreachable)
    throw new Error(
      `the redis benchmark needs Redis at ${REDIS_URL} (${unreachable}); start it, or run \`npm run bench -- executor runtime\``,
    );
  const namespace = `codemode-bench-${randomUUID().slice(0, 8)}`;
  const storage = redisStorage(REDIS_URL, { namespace });
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  const many = sequentialCalls(CALLS);
  const none = sequentialCalls(0);
  const echo = (readOnly: boolean) =>
    defineConnector({
      name: "bench",
      tools: { echo: { readOnly, execute: async (args: { i: number }) => many.answer("bench", "echo", args) } },
    });
  const runtime = createCodemodeRuntime({ connectors: [echo(true)], storage, maxExecutions: 5, sandboxHost: "inline" });
  const writing = createCodemodeRuntime({
    connectors: [echo(false)],
    storage,
    maxExecutions: 5,
    name: "bench-writing",
    sandboxHost: "inline",
  });
  const unguardedStorage = { keyv: storage.keyv, lock: withoutGuardedWrites(storage.lock), index: storage.index };
  const unguarded = createCodemodeRuntime({
    connectors: [echo(true)],
    storage: unguardedStorage,
    maxExecutions: 5,
    name: "bench-unguarded",
    sandboxHost: "inline",
  });
  const unguardedWriting = createCodemodeRuntime({
    connectors: [echo(false)],
    storage: unguardedStorage,
    maxExecutions: 5,
    name: "bench-unguarded-writing",
    sandboxHost: "inline",
  });
  // A value the size of the runtime's log entry for one echo call, as Keyv stores it.
  const entrySized = JSON.stringify({
    value: JSON.stringify({
      seq: 17,
      connector: "bench",
      method: "echo",
      args: '{"i":17}',
      result: '{"i":17,"ok":true}',
      requiresApproval: false,
      state: "applied",
      startedAt: Date.now(),
      endedAt: Date.now(),
    }),
    expires: null,
  });
  const through =
    (program: typeof many, on = runtime) =>
    async () => {
      const outcome = await on.execute({ code: `async () => {${program.body}\n}` });
      check(outcome.status === "completed", `the runtime did not complete: ${JSON.stringify(outcome).slice(0, 300)}`);
      check(
        JSON.stringify(outcome.result) === program.expected,
        `the runtime returned ${JSON.stringify(outcome.result)}`,
      );
    };
  const lease = await storage.lock.acquire(`bench:${namespace}`, { ttlMs: 3_600_000, waitMs: 0 });
  check(lease?.setIfHeld !== undefined, "redisStorage's lease offers no fenced write");
  const guarded = lease.setIfHeld.bind(lease);
  const innerValue = (JSON.parse(entrySized) as { value: string }).value;
  try {
    const samples = await sampleInterleaved(
      {
        runtimeMany: through(many),
        runtimeNone: through(none),
        writingMany: through(many, writing),
        writingNone: through(none, writing),
        unguardedMany: through(many, unguarded),
        unguardedNone: through(none, unguarded),
        unguardedWritingMany: through(many, unguardedWriting),
        unguardedWritingNone: through(none, unguardedWriting),
        setLoop: async () => {
          for (let i = 0; i < CALLS; i++) await client.set(`${namespace}:baseline:${i % 16}`, entrySized);
        },
        guardedLoop: async () => {
          for (let i = 0; i < CALLS; i++)
            check(
              await guarded([{ key: `baseline:guarded:${i % 16}`, value: innerValue }]),
              "the guarded write was refused",
            );
        },
      },
      { warmup: 2, iterations: 12 },
    );
    const set = stats(samples.setLoop);
    const setPerCall = { median: (set.median / CALLS) * 1_000, p90: (set.p90 / CALLS) * 1_000, n: set.n };
    const guardedSet = stats(samples.guardedLoop);
    const runtimePerCall = perCallCost(samples.runtimeMany, samples.runtimeNone, CALLS);
    const writingPerCall = perCallCost(samples.writingMany, samples.writingNone, CALLS);
    const unguardedPerCall = perCallCost(samples.unguardedMany, samples.unguardedNone, CALLS);
    const unguardedWritingPerCall = perCallCost(samples.unguardedWritingMany, samples.unguardedWritingNone, CALLS);
    const z = runtimePerCall.empty;
    const benchmark = `durable per connector call over Redis (${CALLS} sequential awaits, inline host)`;
    return [
      {
        benchmark,
        subject: "S: Redis SET round trip (node-redis)",
        unit: "µs",
        median: setPerCall.median,
        p90: setPerCall.p90,
        samples: setPerCall.n,
      },
      {
        benchmark,
        subject: "guarded write of one entry: lease check + SET in one script (redisStorage lease)",
        unit: "µs",
        median: (guardedSet.median / CALLS) * 1_000,
        p90: (guardedSet.p90 / CALLS) * 1_000,
        ratio: guardedSet.median / set.median,
        versus: "S",
        samples: guardedSet.n,
      },
      {
        benchmark,
        subject: "runtime on redisStorage, readOnly tool: bridge + 1 log write",
        unit: "µs",
        median: runtimePerCall.median,
        p90: runtimePerCall.p90,
        ratio: runtimePerCall.median / setPerCall.median,
        versus: "S",
        target: "≤ 2.5× S per call",
        samples: runtimePerCall.n,
      },
      {
        benchmark,
        subject: "runtime on redisStorage, tool that may change things: bridge + 2 log writes",
        unit: "µs",
        median: writingPerCall.median,
        p90: writingPerCall.p90,
        ratio: writingPerCall.median / setPerCall.median,
        versus: "S",
        samples: writingPerCall.n,
      },
      {
        benchmark,
        subject: "pass with 0 calls on redisStorage",
        unit: "ms",
        median: z.median,
        p90: z.p90,
        samples: z.n,
      },
      {
        benchmark,
        subject: "B: readOnly tool, lease checked then a plain write (no guarded write)",
        unit: "µs",
        median: unguardedPerCall.median,
        p90: unguardedPerCall.p90,
        ratio: unguardedPerCall.median / setPerCall.median,
        versus: "S",
        samples: unguardedPerCall.n,
      },
      {
        benchmark,
        subject: "cost of guarding: readOnly tool, guarded ÷ B",
        unit: "µs",
        median: runtimePerCall.median,
        ratio: runtimePerCall.median / unguardedPerCall.median,
        versus: "B",
        target: "< 1.1× B",
        samples: runtimePerCall.n,
      },
      {
        benchmark,
        subject: "B': tool that may change things, lease checked then plain writes",
        unit: "µs",
        median: unguardedWritingPerCall.median,
        p90: unguardedWritingPerCall.p90,
        ratio: unguardedWritingPerCall.median / setPerCall.median,
        versus: "S",
        samples: unguardedWritingPerCall.n,
      },
      {
        benchmark,
        subject: "cost of guarding: tool that may change things, guarded ÷ B'",
        unit: "µs",
        median: writingPerCall.median,
        ratio: writingPerCall.median / unguardedWritingPerCall.median,
        versus: "B'",
        target: "< 1.1× B'",
        samples: writingPerCall.n,
      },
      {
        benchmark,
        subject: "B: pass with 0 calls, lease checked then plain writes",
        unit: "ms",
        median: unguardedPerCall.empty.median,
        p90: unguardedPerCall.empty.p90,
        samples: unguardedPerCall.empty.n,
      },
      {
        benchmark,
        subject: "cost of guarding: pass with 0 calls, guarded ÷ B",
        unit: "ms",
        median: z.median,
        ratio: z.median / unguardedPerCall.empty.median,
        versus: "B",
        target: "< 1.1× B",
        samples: z.n,
      },
    ];
  } finally {
    await lease.release();
    await runtime.close();
    await writing.close();
    await unguarded.close();
    await unguardedWriting.close();
    await storage.close();
    const keys = await client.keys(`${namespace}*`);
    if (keys.length > 0) await client.del(keys);
    await client.close();
  }
}

/** The lock with its leases' guarded write hidden: the runtime checks the lease, then writes plainly. */
function withoutGuardedWrites(lock: LockProvider): LockProvider {
  return {
    isHeld: (key) => lock.isHeld(key),
    async acquire(key, options) {
      const lease = await lock.acquire(key, options);
      return lease && { token: lease.token, renew: (ttlMs) => lease.renew(ttlMs), release: () => lease.release() };
    },
  };
}

export const redisBenchmark: Benchmark = {
  name: "redis",
  description: "the durable runtime on redisStorage: per-call cost against a Redis SET round trip",
  repeat: 5,
  run: perCallOverRedis,
};
