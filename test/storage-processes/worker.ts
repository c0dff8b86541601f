/**
 * A worker process for test/storage-processes-*.test.ts: one Code Mode runtime host over a shared
 * store, driven by its parent over the IPC channel. It imports the BUILT packages (run
 * `npm run build` first), as a deployed worker would.
 *
 *   node test/storage-processes/worker.ts '{"store":"redis","url":"redis://…","namespace":"…","workerId":"a"}'
 *
 * Its `ledger` connector counts each applied action on the real store (a Redis hash, a SQL
 * table), so the parent can check "exactly once" across processes without trusting either worker.
 */
import { DatabaseSync } from "node:sqlite";
import {
  type CodemodeRuntime,
  createCodemodeRuntime,
  type Decision,
  defineConnector,
  type Outcome,
} from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { postgresStorage } from "@codemode/storage/postgres";
import { redisStorage } from "@codemode/storage/redis";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { createClient } from "@keyv/redis";
import pg from "pg";

export interface WorkerConfig {
  store: "redis" | "postgres" | "sqlite";
  /** Redis or PostgreSQL URL, or the SQLite file. */
  url: string;
  namespace: string;
  /** SQL stores: the tables (store, leases, effects). */
  tables?: { table: string; leaseTable: string; effects: string };
  workerId: string;
  leaseMs: number;
}

export type WorkerRequest =
  | { op: "execute"; name: string; code: string }
  | { op: "executeMany"; name: string; code: string; count: number }
  | { op: "approveMany"; name: string; executionIds: string[]; startAt: number; spacingMs: number }
  | { op: "rejectMany"; name: string; executionIds: string[]; seq: number; startAt: number; spacingMs: number }
  | {
      op: "decideMany";
      name: string;
      executionIds: string[];
      decisions: Decision[];
      startAt: number;
      spacingMs: number;
    }
  | { op: "approve"; name: string; executionId: string }
  | { op: "recover"; name: string; executionId: string }
  | { op: "expirePaused"; name: string }
  | { op: "status"; name: string; executionIds: string[] }
  | { op: "log"; name: string; executionId: string; full?: boolean };

export interface Summary {
  executionId: string;
  status: Outcome["status"];
  code?: string;
  error?: string;
}

const config = JSON.parse(process.argv[2] ?? "{}") as WorkerConfig;

const storage: CodemodeStorage =
  config.store === "redis"
    ? redisStorage(config.url, { namespace: config.namespace })
    : config.store === "postgres"
      ? postgresStorage(config.url, {
          namespace: config.namespace,
          table: config.tables!.table,
          leaseTable: config.tables!.leaseTable,
        })
      : sqliteStorage(config.url, { namespace: config.namespace });

/** Counts an applied action on the real store: the parent reads these counts. */
const countEffect: (idempotencyKey: string) => Promise<void> = await (async () => {
  if (config.store === "redis") {
    const client = createClient({ url: config.url });
    client.on("error", () => undefined);
    await client.connect();
    return async (key: string) => void (await client.hIncrBy(`${config.namespace}:effects`, key, 1));
  }
  if (config.store === "postgres") {
    const pool = new pg.Pool({ connectionString: config.url, max: 2 });
    return async (key: string) =>
      void (await pool.query(`INSERT INTO "${config.tables!.effects}" (key, worker) VALUES ($1, $2)`, [
        key,
        config.workerId,
      ]));
  }
  const database = new DatabaseSync(config.url, { timeout: 5_000 });
  database.exec(`CREATE TABLE IF NOT EXISTS effects (key TEXT NOT NULL, worker TEXT NOT NULL)`);
  const insert = database.prepare(`INSERT INTO effects (key, worker) VALUES (?, ?)`);
  return async (key: string) => void insert.run(key, config.workerId);
})();

const ledger = defineConnector({
  name: "ledger",
  tools: {
    read: { execute: async (args: { i: number }) => ({ i: args.i }) },
    apply: {
      requiresApproval: true,
      execute: async (args: { item: string }, context) => {
        await countEffect(context.idempotencyKey);
        return { applied: args.item, by: config.workerId };
      },
    },
    /**
     * Tells the parent it is inside the tool, then takes `ms` to finish (the parent may freeze
     * this process meanwhile) and counts its effect. Interrupted, it asks before running again.
     */
    slow: {
      onInterrupted: "ask",
      execute: async (args: { ms: number }, context) => {
        process.send?.({ event: "slow", executionId: context.executionId, workerId: config.workerId });
        await new Promise((resolve) => setTimeout(resolve, args.ms));
        await countEffect(context.idempotencyKey);
        return { slow: config.workerId };
      },
    },
    /**
     * Counts its effect; 50 ms after it returned (its result is recorded by then) it tells the
     * parent, which then may freeze this process before the next call.
     */
    note: {
      onInterrupted: "ask",
      execute: async (args: { item: string }, context) => {
        await countEffect(context.idempotencyKey);
        setTimeout(
          () =>
            process.send?.({
              event: "noted",
              executionId: context.executionId,
              item: args.item,
              workerId: config.workerId,
            }),
          50,
        );
        return { noted: args.item };
      },
    },
    /** Tells the parent it is inside a pass, then never returns: the parent kills this process. */
    stall: {
      execute: async (_args: unknown, context) => {
        process.send?.({ event: "stalled", executionId: context.executionId });
        return new Promise(() => undefined);
      },
    },
  },
});

const runtimes = new Map<string, CodemodeRuntime>();
function runtimeFor(name: string): CodemodeRuntime {
  let runtime = runtimes.get(name);
  if (!runtime) {
    runtime = createCodemodeRuntime({
      name,
      connectors: [ledger],
      storage,
      leaseMs: config.leaseMs,
      lockWaitMs: 10_000,
      maxExecutions: 1_000,
      limits: { timeoutMs: 20_000 },
    });
    runtimes.set(name, runtime);
  }
  return runtime;
}

function summary(outcome: Outcome): Summary {
  const result: Summary = { executionId: outcome.executionId, status: outcome.status };
  if (outcome.status === "error") {
    result.code = outcome.code;
    result.error = outcome.error;
  }
  return result;
}

/** Runs `work` over `items`, `concurrency` at a time, keeping the order of results. */
async function pooled<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, concurrency) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

const waitUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/**
 * Starts `work` for item i at `startAt + i * spacingMs` (wall clock, shared by every process on
 * the machine), without waiting for earlier items: two processes given the same schedule really
 * collide on each item instead of one trailing the other.
 */
function onSchedule<T, R>(items: T[], startAt: number, spacingMs: number, work: (item: T) => Promise<R>): Promise<R[]> {
  return Promise.all(
    items.map(async (item, index) => {
      await waitUntil(startAt + index * spacingMs);
      return work(item);
    }),
  );
}

async function handle(request: WorkerRequest): Promise<unknown> {
  const runtime = runtimeFor(request.name);
  switch (request.op) {
    case "execute":
      return summary(await runtime.execute({ code: request.code }));
    case "executeMany":
      return pooled(
        Array.from({ length: request.count }, (_, index) => index),
        4,
        async () => summary(await runtime.execute({ code: request.code })),
      );
    case "approve":
      return summary(await runtime.approve({ executionId: request.executionId }));
    case "recover":
      return (await runtime.recover({ executionId: request.executionId })).map(summary);
    case "approveMany":
      return onSchedule(request.executionIds, request.startAt, request.spacingMs, async (executionId) =>
        summary(await runtime.approve({ executionId })),
      );
    case "rejectMany":
      return onSchedule(request.executionIds, request.startAt, request.spacingMs, (executionId) =>
        runtime.reject({ executionId, seq: request.seq, by: config.workerId }),
      );
    case "decideMany":
      return onSchedule(request.executionIds, request.startAt, request.spacingMs, async (executionId) =>
        summary(await runtime.decide({ executionId, decisions: request.decisions, by: config.workerId })),
      );
    case "expirePaused":
      return runtime.expirePaused({ maxAgeMs: 24 * 60 * 60 * 1000 });
    case "log":
      return ((await runtime.execution(request.executionId))?.log ?? []).map((entry) => ({
        seq: entry.seq,
        method: entry.method,
        state: entry.state,
        ...(request.full ? { args: entry.args, ...(entry.decision ? { decision: entry.decision } : {}) } : {}),
      }));
    case "status":
      return Promise.all(
        request.executionIds.map(async (executionId) => (await runtime.execution(executionId))?.status ?? null),
      );
  }
}

process.on("message", (message: { id: number; request: WorkerRequest }) => {
  handle(message.request).then(
    (result) => process.send?.({ id: message.id, result }),
    (error: unknown) =>
      process.send?.({
        id: message.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  );
});
process.on("disconnect", () => {
  void (async () => {
    for (const runtime of runtimes.values()) await runtime.close();
    await storage.close();
    process.exit(0);
  })();
});
process.send?.({ event: "ready", pid: process.pid });
