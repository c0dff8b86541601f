// The stories of the recover tests (test/recover-*.test.ts), one store at a time.
import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecoverWorkerConfig } from "./worker.ts";

const WORKER = fileURLToPath(new URL("./worker.ts", import.meta.url));
const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
/** Short, so a killed worker's lease lapses quickly; a live worker renews it every third. */
const LEASE_MS = 1_000;

type Summary = {
  executionId: string;
  status: string;
  result?: unknown;
  pending?: Array<{ seq: number; method: string }>;
  code?: string;
  calls?: string[];
};

interface Spawned {
  child: ChildProcess;
  event(name: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(): Promise<void>;
}

function spawnWorker(config: RecoverWorkerConfig): Spawned {
  const child = fork(WORKER, [JSON.stringify(config)], {
    execArgv: [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json",
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const events: Array<Record<string, unknown>> = [];
  child.on("message", (message: Record<string, unknown>) => events.push(message));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    async event(name, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find((event) => event.event === name);
        if (found) return found;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`worker ended before "${name}": ${stderr}`);
        if (Date.now() > deadline) throw new Error(`no "${name}" within ${timeoutMs} ms: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

interface StoreCase {
  name: RecoverWorkerConfig["store"];
  url: () => string;
  unavailable(): Promise<string | undefined>;
  attempts(table: string, namespace: string): Promise<string[]>;
  cleanup(): Promise<void>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), "codemode-recover-"));
const sqliteFile = join(sqliteDir, "runs.sqlite");
const stores: StoreCase[] = [
  {
    name: "sqlite",
    url: () => sqliteFile,
    unavailable: async () => undefined,
    async attempts(table) {
      const database = new DatabaseSync(sqliteFile);
      const rows = database.prepare(`SELECT key, worker FROM "${table}" ORDER BY rowid`).all() as Array<{
        key: string;
        worker: string;
      }>;
      database.close();
      return rows.map((row) => `${row.key} ${row.worker}`);
    },
    async cleanup() {
      rmSync(sqliteDir, { recursive: true, force: true });
    },
  },
  {
    name: "postgres",
    url: () => POSTGRES_URL,
    unavailable: () => tcpUnreachable(POSTGRES_URL),
    async attempts(table) {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      const { rows } = await pool.query(`SELECT key, worker FROM "${table}" ORDER BY ctid`);
      await pool.end();
      return (rows as Array<{ key: string; worker: string }>).map((row) => `${row.key} ${row.worker}`);
    },
    async cleanup() {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      const { rows } = await pool.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'recover_%'`);
      for (const row of rows as Array<{ tablename: string }>)
        await pool.query(`DROP TABLE IF EXISTS "${row.tablename}"`);
      await pool.end();
    },
  },
  {
    name: "redis",
    url: () => REDIS_URL,
    unavailable: () => tcpUnreachable(REDIS_URL),
    async attempts(table, namespace) {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const rows = await client.lRange(`${namespace}:${table}`, 0, -1);
      await client.close();
      return rows;
    },
    async cleanup() {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const keys = await client.keys("recover-*");
      if (keys.length > 0) await client.del(keys);
      await client.close();
    },
  },
];

/**
 * The recover stories on one store (`sqlite`, `postgres` or `redis`): each store has its own test
 * file, so the three run side by side.
 */
export function recoverStories(storeName: "sqlite" | "postgres" | "redis"): void {
  const store = stores.find((candidate) => candidate.name === storeName)!;
  afterAll(async () => {
    if (!(await store.unavailable())) await store.cleanup();
  });
  describe(`runtime.recover across processes on ${store.name}`, () => {
    let unavailable: string | undefined;
    beforeAll(async () => {
      unavailable = await store.unavailable();
      if (unavailable && process.env.CI)
        throw new Error(`${store.name} is not reachable (${unavailable}); CI must provide it`);
    });
    const skip = () => {
      if (unavailable) console.warn(`story not run: ${store.name} is not reachable (${unavailable})`);
      return unavailable !== undefined;
    };

    /** One story's store space: a namespace and an attempts table of its own. */
    const space = () => {
      const id = randomUUID().slice(0, 8);
      return { namespace: `recover-${id}`, attempts: `recover_${id}` };
    };
    const base = (
      where: { namespace: string; attempts: string },
      role: RecoverWorkerConfig["role"],
      workerId: string,
    ) => ({
      store: store.name,
      url: store.url(),
      leaseMs: LEASE_MS,
      role,
      workerId,
      ...where,
    });

    /** Starts a run in a worker and waits until it is inside `ledger.charge*`. */
    async function startRun(where: { namespace: string; attempts: string }, role: "run" | "hold", code: string) {
      const worker = spawnWorker({ ...base(where, role, role === "run" ? "killed" : "alive"), code });
      const inside = await worker.event("inside-call");
      return { worker, executionId: String(inside.executionId) };
    }

    /** Asks a fresh process to recover; retries until the killed host's lease has lapsed. */
    async function recoverUntilFound(
      where: { namespace: string; attempts: string },
      executionId?: string,
      reportCalls = false,
    ): Promise<Summary[]> {
      for (let attempt = 0; attempt < 30; attempt++) {
        const outcomes = await recoverOnce(where, executionId, reportCalls);
        if (outcomes.length > 0) return outcomes;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      throw new Error("nothing was recovered within the time the lease takes to lapse");
    }
    async function recoverOnce(
      where: { namespace: string; attempts: string },
      executionId?: string,
      reportCalls = false,
    ): Promise<Summary[]> {
      const worker = spawnWorker({
        ...base(where, "recover", "recoverer"),
        ...(executionId ? { executionId } : {}),
        ...(reportCalls ? { reportCalls } : {}),
      });
      const reply = await worker.event("recovered");
      await worker.kill();
      return reply.outcomes as Summary[];
    }

    it("R-RP-4: a worker killed inside a call is recovered by another process; the call runs again with the same idempotency key", async () => {
      if (skip()) return;
      const where = space();
      const { worker, executionId } = await startRun(
        where,
        "run",
        "async () => { const account = await ledger.read({}); const charge = await ledger.charge({ amount: 5 }); return { account, charge }; }",
      );
      await worker.kill();
      const outcomes = await recoverUntilFound(where);
      expect(outcomes).toEqual([
        {
          executionId,
          status: "completed",
          result: { account: { balance: 100 }, charge: { charged: 5, key: `${executionId}:1`, by: "recoverer" } },
        },
      ]);
      // The interrupted call ran once in each process, both times with the same key; the read replayed.
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([
        `${executionId}:1 killed`,
        `${executionId}:1 recoverer`,
      ]);
      // Nothing is left to recover.
      expect(await recoverOnce(where)).toEqual([]);
    });

    it("readOnly: a worker killed inside a read-only call left no entry for it; the recovered run calls it again and records it once", async () => {
      if (skip()) return;
      const where = space();
      const { worker, executionId } = await startRun(
        where,
        "run",
        "async () => { const first = await ledger.lookup({ stall: true }); return first; }",
      );
      await worker.kill();
      const outcomes = await recoverUntilFound(where, executionId, true);
      expect(outcomes).toEqual([
        { executionId, status: "completed", result: { balance: 100, by: "recoverer" }, calls: ["0 lookup applied"] },
      ]);
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([
        `${executionId}:0 killed`,
        `${executionId}:0 recoverer`,
      ]);
    });

    it("readOnly: a read-only result recorded without waiting lands before the next call's write-ahead, so a recovery replays it", async () => {
      if (skip()) return;
      const where = space();
      const { worker, executionId } = await startRun(
        where,
        "run",
        "async () => { const seen = await ledger.lookup({}); const charge = await ledger.charge({ amount: 5 }); return { seen, charge }; }",
      );
      await worker.kill();
      const outcomes = await recoverUntilFound(where, executionId, true);
      expect(outcomes).toEqual([
        {
          executionId,
          status: "completed",
          result: {
            seen: { balance: 100, by: "killed" },
            charge: { charged: 5, key: `${executionId}:1`, by: "recoverer" },
          },
          calls: ["0 lookup applied", "1 charge applied"],
        },
      ]);
      // The lookup ran once (replayed from the log); the interrupted charge ran again with its key.
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([
        `${executionId}:0 killed`,
        `${executionId}:1 killed`,
        `${executionId}:1 recoverer`,
      ]);
    });

    it('R-RP-4b: with onInterrupted "ask" the recovered run pauses for a person instead of running the call twice', async () => {
      if (skip()) return;
      const where = space();
      const { worker, executionId } = await startRun(
        where,
        "run",
        "async () => { await ledger.read({}); return ledger.charge_ask({ amount: 7 }); }",
      );
      await worker.kill();
      const [outcome] = await recoverUntilFound(where, executionId);
      expect(outcome).toMatchObject({ executionId, status: "paused", pending: [{ seq: 1, method: "charge_ask" }] });
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([`${executionId}:1 killed`]);
    });

    it('R-AP-9 R-RP-4b: a host dies inside an approved onInterrupted "ask" call; recover asks again in a new pause; the approval of the earlier pause decides nothing, one of the new pause runs it', async () => {
      if (skip()) return;
      const where = space();
      const starter = spawnWorker({
        ...base(where, "run", "starter"),
        code: "async () => { await ledger.read({}); return ledger.charge_approved_ask({ amount: 13 }); }",
      });
      const paused = (await starter.event("outcome")).outcome as Summary;
      await starter.kill();
      expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 1, pauseId: "1.1" }] });
      const approver = spawnWorker({ ...base(where, "approve", "killed"), executionId: paused.executionId });
      await approver.event("inside-call");
      await approver.kill();
      const [asked] = await recoverUntilFound(where, paused.executionId);
      expect(asked).toMatchObject({ status: "paused", pending: [{ seq: 1, pauseId: "1.2" }] });

      const decide = async (pauseId: string) => {
        const decider = spawnWorker({
          ...base(where, "decide", "decider"),
          executionId: paused.executionId,
          decisions: [{ seq: 1, decision: "approve", pauseId }],
        });
        const outcome = (await decider.event("decided")).outcome as Summary;
        // Its writes are done once it reported; it lets go of the store (SQLite: the file) as it ends.
        await decider.kill();
        return outcome;
      };
      // The approval given before the crash, sent again: it answers a pause the call has left.
      expect(await decide("1.1")).toMatchObject({ status: "error", code: "NOT_PAUSED" });
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([`${paused.executionId}:1 killed`]);
      expect(await decide("1.2")).toMatchObject({ status: "completed", result: { charged: 13, by: "decider" } });
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([
        `${paused.executionId}:1 killed`,
        `${paused.executionId}:1 decider`,
      ]);
    });

    it("R-RP-4: a run approved for one call and killed inside it is resumed for that same call, without asking again", async () => {
      if (skip()) return;
      const where = space();
      const starter = spawnWorker({
        ...base(where, "run", "starter"),
        code: "async () => { await ledger.read({}); return ledger.charge_approved({ amount: 11 }); }",
      });
      const paused = (await starter.event("outcome")).outcome as Summary;
      await starter.kill();
      expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 1, method: "charge_approved" }] });
      const approver = spawnWorker({ ...base(where, "approve", "killed"), executionId: paused.executionId });
      await approver.event("inside-call");
      await approver.kill();
      const outcomes = await recoverUntilFound(where, paused.executionId);
      expect(outcomes).toEqual([
        {
          executionId: paused.executionId,
          status: "completed",
          result: { charged: 11, key: `${paused.executionId}:1`, by: "recoverer" },
        },
      ]);
      expect(await store.attempts(where.attempts, where.namespace)).toEqual([
        `${paused.executionId}:1 killed`,
        `${paused.executionId}:1 recoverer`,
      ]);
    });

    it("a live worker's run is never taken, however long it runs; once that worker dies it is recovered", async () => {
      if (skip()) return;
      const where = space();
      const { worker, executionId } = await startRun(where, "hold", "async () => ledger.charge({ amount: 9 })");
      // Several lease lengths: a lease that was not renewed would have lapsed by now.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 3));
      expect(await recoverOnce(where, executionId)).toEqual([]);
      expect(await recoverOnce(where)).toEqual([]);
      await worker.kill();
      const outcomes = await recoverUntilFound(where, executionId);
      expect(outcomes).toEqual([
        { executionId, status: "completed", result: { charged: 9, key: `${executionId}:0`, by: "recoverer" } },
      ]);
    });
  });
}
