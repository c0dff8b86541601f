/**
 * A host process for test/recover-*.test.ts over a shared store, importing the BUILT packages
 * (run `npm run build` first), as a deployed worker would.
 *
 *   node test/recover-processes/worker.ts '{"store":"sqlite","url":"/tmp/x.sqlite","namespace":"n","role":"run","workerId":"a"}'
 *
 * role "run": executes `code` and reports the execution id; its `ledger.charge` (or `charge_ask`)
 * records the attempt on the real store, then, in this role, never returns — the parent kills
 * the process mid-call. role "recover": calls `runtime.recover(...)` and reports the outcomes.
 * role "approve": approves `executionId` (its approved call then stalls: the parent kills it).
 * role "hold": like "run", but stays alive (renewing its lease) so the parent can check that a
 * live worker's run is never taken. role "decide": `runtime.decide` with `decisions` on
 * `executionId`, reports the outcome (its calls run to their end).
 */
import { DatabaseSync } from "node:sqlite";
import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { postgresStorage } from "@codemode/storage/postgres";
import { redisStorage } from "@codemode/storage/redis";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { createClient } from "@keyv/redis";
import pg from "pg";

export interface RecoverWorkerConfig {
  store: "redis" | "postgres" | "sqlite";
  url: string;
  namespace: string;
  role: "run" | "hold" | "recover" | "approve" | "decide";
  workerId: string;
  leaseMs: number;
  code?: string;
  executionId?: string;
  /** SQL stores: a table of attempts, one row per call of `charge`. */
  attempts: string;
  /** Outcomes list their log as "seq method state" lines. */
  reportCalls?: boolean;
  /** Role "decide": what it decides. */
  decisions?: Array<{ seq: number; decision: "approve" | "deny"; pauseId?: string }>;
}

const config = JSON.parse(process.argv[2] ?? "{}") as RecoverWorkerConfig;

const storage: CodemodeStorage =
  config.store === "redis"
    ? redisStorage(config.url, { namespace: config.namespace })
    : config.store === "postgres"
      ? postgresStorage(config.url, {
          namespace: config.namespace,
          table: `${config.attempts}_kv`,
          leaseTable: `${config.attempts}_leases`,
          indexTable: `${config.attempts}_ix`,
        })
      : sqliteStorage(config.url, { namespace: config.namespace });

/** Records one attempt of a call on the real store, keyed by its idempotency key. */
const recordAttempt: (idempotencyKey: string) => Promise<void> = await (async () => {
  if (config.store === "redis") {
    const client = createClient({ url: config.url });
    client.on("error", () => undefined);
    await client.connect();
    return async (key: string) =>
      void (await client.rPush(`${config.namespace}:${config.attempts}`, `${key} ${config.workerId}`));
  }
  if (config.store === "postgres") {
    const pool = new pg.Pool({ connectionString: config.url, max: 2 });
    await pool.query(`CREATE TABLE IF NOT EXISTS "${config.attempts}" (key TEXT NOT NULL, worker TEXT NOT NULL)`);
    return async (key: string) =>
      void (await pool.query(`INSERT INTO "${config.attempts}" (key, worker) VALUES ($1, $2)`, [key, config.workerId]));
  }
  const database = new DatabaseSync(config.url, { timeout: 5_000 });
  database.exec(`CREATE TABLE IF NOT EXISTS "${config.attempts}" (key TEXT NOT NULL, worker TEXT NOT NULL)`);
  const insert = database.prepare(`INSERT INTO "${config.attempts}" (key, worker) VALUES (?, ?)`);
  return async (key: string) => void insert.run(key, config.workerId);
})();

const stallsHere = config.role !== "recover" && config.role !== "decide";
const charge = async (args: { amount: number }, context: { idempotencyKey: string; executionId: string }) => {
  await recordAttempt(context.idempotencyKey);
  if (stallsHere) {
    process.send?.({ event: "inside-call", executionId: context.executionId });
    return new Promise(() => undefined);
  }
  return { charged: args.amount, key: context.idempotencyKey, by: config.workerId };
};

const ledger = defineConnector({
  name: "ledger",
  tools: {
    read: { execute: async () => ({ balance: 100 }) },
    /** Read-only (no write-ahead entry): records its attempt; with `stall`, this role is killed inside it. */
    lookup: {
      readOnly: true,
      execute: async (args: { stall?: boolean }, context: { idempotencyKey: string; executionId: string }) => {
        await recordAttempt(context.idempotencyKey);
        if (stallsHere && args.stall === true) {
          process.send?.({ event: "inside-call", executionId: context.executionId });
          return new Promise(() => undefined);
        }
        return { balance: 100, by: config.workerId };
      },
    },
    charge: { execute: charge },
    charge_ask: { onInterrupted: "ask", execute: charge },
    refund: { requiresApproval: true, execute: async (args: { amount: number }) => ({ refunded: args.amount }) },
    /** Needs approval, then behaves like charge: the approving process is killed inside it. */
    charge_approved: { requiresApproval: true, execute: charge },
    /** Needs approval and, interrupted, is asked about again (it may have taken effect). */
    charge_approved_ask: { requiresApproval: true, onInterrupted: "ask", execute: charge },
  },
});

const runtime = createCodemodeRuntime({
  connectors: [ledger],
  storage,
  leaseMs: config.leaseMs,
  limits: { timeoutMs: 60_000 },
  logger: { warn() {} },
});

function summary(outcome: Outcome) {
  return {
    executionId: outcome.executionId,
    status: outcome.status,
    ...(outcome.status === "completed" ? { result: outcome.result } : {}),
    ...(outcome.status === "paused" ? { pending: outcome.pending } : {}),
    ...(outcome.status === "error" ? { code: outcome.code, error: outcome.error } : {}),
    ...(config.reportCalls
      ? { calls: (outcome.calls ?? []).map((call) => `${call.seq} ${call.method} ${call.state}`) }
      : {}),
  };
}

if (config.role === "recover") {
  const outcomes = await runtime.recover(
    config.executionId === undefined ? undefined : { executionId: config.executionId },
  );
  process.send?.({ event: "recovered", outcomes: outcomes.map(summary) });
  await runtime.close();
  await storage.close();
  process.disconnect?.();
} else if (config.role === "approve") {
  void runtime.approve({ executionId: config.executionId ?? "", by: "ann" });
} else if (config.role === "decide") {
  const outcome = await runtime.decide({
    executionId: config.executionId ?? "",
    by: "ann",
    decisions: config.decisions ?? [],
  });
  process.send?.({ event: "decided", outcome: summary(outcome) });
  await runtime.close();
  await storage.close();
  process.disconnect?.();
} else {
  const outcome = await runtime.execute({ code: config.code ?? "" });
  process.send?.({ event: "outcome", outcome: summary(outcome) });
}
