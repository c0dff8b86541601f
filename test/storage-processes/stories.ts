// The stories of the storage process tests (test/storage-processes-*.test.ts), one store at a time.
import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Summary, WorkerConfig, WorkerRequest } from "./worker.ts";

const WORKER = fileURLToPath(new URL("./worker.ts", import.meta.url));
const BUILT = [
  fileURLToPath(new URL("../../packages/core/dist/index.js", import.meta.url)),
  fileURLToPath(new URL("../../packages/storage/dist/index.js", import.meta.url)),
];
const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
/** Lease of the workers that race: the runtime's default is 30 s; long enough for a loaded machine. */
const LEASE_MS = 30_000;
/** Lease of the worker that gets killed, so that its run's lease lapses quickly. */
const SHORT_LEASE_MS = 1_500;

const readThenApply = `async () => { const first = await ledger.read({ i: 0 }); const done = await ledger.apply({ item: "item-" + first.i }); return done; }`;

/** A worker process and a way to ask it things. */
class Worker {
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly events: Array<{ event: string; [key: string]: unknown }> = [];
  private readonly eventWaiters: Array<() => void> = [];
  stderr = "";
  exited = false;

  private constructor(readonly child: ChildProcess) {
    child.stderr?.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.on("message", (message: { id?: number; result?: unknown; error?: string; event?: string }) => {
      if (message.event) {
        this.events.push(message as { event: string });
        for (const wake of this.eventWaiters.splice(0)) wake();
        return;
      }
      const pending = this.waiting.get(message.id!);
      this.waiting.delete(message.id!);
      if (message.error !== undefined) pending?.reject(new Error(`worker failed: ${message.error}`));
      else pending?.resolve(message.result);
    });
    child.on("exit", () => {
      this.exited = true;
      for (const pending of this.waiting.values()) pending.reject(new Error(`worker exited; stderr:\n${this.stderr}`));
      this.waiting.clear();
      for (const wake of this.eventWaiters.splice(0)) wake();
    });
  }

  static async start(config: WorkerConfig): Promise<Worker> {
    const child = fork(WORKER, [JSON.stringify(config)], {
      execArgv: [],
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "json",
    });
    const worker = new Worker(child);
    await worker.event("ready", 20_000);
    return worker;
  }

  ask<T>(request: WorkerRequest): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, request });
    });
  }

  async event(name: string, timeoutMs: number): Promise<{ event: string; [key: string]: unknown }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((event) => event.event === name);
      if (found) return found;
      if (this.exited) throw new Error(`worker exited before "${name}"; stderr:\n${this.stderr}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new Error(`no "${name}" from the worker within ${timeoutMs} ms; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.eventWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await exited;
  }
}

/** One shared store the workers point at, and how the parent reads the effects on it. */
interface Backend {
  label: string;
  /** How many racing approve pairs this store gets. */
  racingPairs: number;
  unavailable(): Promise<string | undefined>;
  setUp(): Promise<void>;
  config(workerId: string, leaseMs?: number): WorkerConfig;
  /** Applied actions counted on the store: idempotencyKey → times applied. */
  effects(): Promise<Map<string, number>>;
  /** Every stored key of an execution (head, code, log entries, result) with its raw value, as the store holds it. */
  raw(executionId: string): Promise<Record<string, string>>;
  tearDown(): Promise<void>;
}

function redisBackend(): Backend {
  const namespace = `codemode-processes-${randomUUID().slice(0, 8)}`;
  const withClient = async <T>(work: (client: ReturnType<typeof createClient>) => Promise<T>): Promise<T> => {
    const client: ReturnType<typeof createClient> = createClient({ url: REDIS_URL }) as ReturnType<typeof createClient>;
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.close();
    }
  };
  return {
    label: "Redis",
    racingPairs: 200,
    unavailable: () => tcpUnreachable(REDIS_URL),
    async setUp() {},
    config: (workerId, leaseMs = LEASE_MS) => ({ store: "redis", url: REDIS_URL, namespace, workerId, leaseMs }),
    effects: () =>
      withClient(
        async (client) =>
          new Map(
            Object.entries(await client.hGetAll(`${namespace}:effects`)).map(([key, count]) => [key, Number(count)]),
          ),
      ),
    raw: (executionId) =>
      withClient(async (client) => {
        const keys = (await client.keys(`${namespace}::*${executionId}*`)).sort();
        const values = keys.length > 0 ? await client.mGet(keys) : [];
        return Object.fromEntries(keys.map((key, index) => [key, String(values[index])]));
      }),
    tearDown: () =>
      withClient(async (client) => {
        const keys = [...(await client.keys(`${namespace}::*`)), `${namespace}:effects`];
        await client.del(keys);
      }),
  };
}

function postgresBackend(): Backend {
  const suffix = randomUUID().slice(0, 8);
  const tables = {
    table: `codemode_processes_store_${suffix}`,
    leaseTable: `codemode_processes_leases_${suffix}`,
    effects: `codemode_processes_effects_${suffix}`,
  };
  const withPool = async <T>(work: (pool: pg.Pool) => Promise<T>): Promise<T> => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      return await work(pool);
    } finally {
      await pool.end();
    }
  };
  return {
    label: "PostgreSQL",
    racingPairs: 200,
    unavailable: () => tcpUnreachable(POSTGRES_URL),
    setUp: () =>
      withPool(
        async (pool) =>
          void (await pool.query(`CREATE TABLE "${tables.effects}" (key TEXT NOT NULL, worker TEXT NOT NULL)`)),
      ),
    config: (workerId, leaseMs = LEASE_MS) => ({
      store: "postgres",
      url: POSTGRES_URL,
      namespace: "codemode",
      tables,
      workerId,
      leaseMs,
    }),
    effects: () =>
      withPool(async (pool) => {
        const rows = (await pool.query(`SELECT key, count(*)::int AS count FROM "${tables.effects}" GROUP BY key`))
          .rows as Array<{ key: string; count: number }>;
        return new Map(rows.map((row) => [row.key, row.count]));
      }),
    raw: (executionId) =>
      withPool(async (pool) => {
        const rows = (
          await pool.query(`SELECT key, value FROM "${tables.table}" WHERE position($1 in key) > 0 ORDER BY key`, [
            executionId,
          ])
        ).rows as Array<{ key: string; value: string }>;
        return Object.fromEntries(rows.map((row) => [row.key, row.value]));
      }),
    tearDown: () =>
      withPool(
        async (pool) =>
          void (await pool.query(
            `DROP TABLE IF EXISTS "${tables.table}", "${tables.leaseTable}", "${tables.effects}"`,
          )),
      ),
  };
}

function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), "codemode-processes-"));
  const file = join(folder, "shared.sqlite");
  return {
    label: "SQLite",
    racingPairs: 200,
    unavailable: async () => undefined,
    async setUp() {},
    config: (workerId, leaseMs = LEASE_MS) => ({
      store: "sqlite",
      url: file,
      namespace: "codemode",
      workerId,
      leaseMs,
    }),
    async effects() {
      const database = new DatabaseSync(file, { timeout: 5_000 });
      try {
        const rows = database.prepare(`SELECT key, count(*) AS count FROM effects GROUP BY key`).all() as Array<{
          key: string;
          count: number;
        }>;
        return new Map(rows.map((row) => [row.key, Number(row.count)]));
      } finally {
        database.close();
      }
    },
    async raw(executionId) {
      const database = new DatabaseSync(file, { timeout: 5_000 });
      try {
        const rows = database
          .prepare(`SELECT key, value FROM keyv WHERE instr(key, ?) > 0 ORDER BY key`)
          .all(executionId) as Array<{ key: string; value: string }>;
        return Object.fromEntries(rows.map((row) => [row.key, row.value]));
      } finally {
        database.close();
      }
    },
    async tearDown() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const BACKENDS = { redis: redisBackend, postgres: postgresBackend, sqlite: sqliteBackend };

/**
 * The stories on one store: each store has its own test file (test/storage-processes-*.test.ts),
 * so the three run side by side.
 */
export function storageProcessStories(kind: keyof typeof BACKENDS): void {
  const backend = BACKENDS[kind]();
  describe(`worker processes sharing ${backend.label}`, () => {
    let unavailable: string | undefined;
    let first: Worker;
    let second: Worker;
    const extra: Worker[] = [];

    beforeAll(async () => {
      const missing = BUILT.filter((file) => !existsSync(file));
      if (missing.length > 0)
        throw new Error(
          `these tests run the built packages; run \`npm run build\` first (missing ${missing.join(", ")})`,
        );
      unavailable = await backend.unavailable();
      if (unavailable) {
        if (process.env.CI) throw new Error(`${backend.label} is not reachable (${unavailable}); CI must provide it`);
        return;
      }
      await backend.setUp();
      [first, second] = await Promise.all([
        Worker.start(backend.config("first")),
        Worker.start(backend.config("second")),
      ]);
    }, 60_000);

    afterAll(async () => {
      await Promise.all([first?.stop(), second?.stop(), ...extra.map((worker) => worker.kill())]);
      if (!unavailable) await backend.tearDown();
    });

    const cannotRun = () => {
      if (!unavailable) return false;
      console.warn(`story not run: ${backend.label} is not reachable (${unavailable})`);
      return true;
    };
    const runtimeName = () => `processes-${randomUUID().slice(0, 8)}`;

    it(`R-AP-6 ${backend.racingPairs} racing approve pairs from two processes: each action is applied exactly once, the loser gets NOT_PAUSED or BUSY`, async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const half = backend.racingPairs / 2;
      const createdAt = Date.now();
      const created = (
        await Promise.all([
          first.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: half }),
          second.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: half }),
        ])
      ).flat();
      expect(created.map((outcome) => outcome.status)).toEqual(created.map(() => "paused"));
      console.log(
        `${backend.label}: ${created.length} paused runs created in ${((Date.now() - createdAt) / 1000).toFixed(1)} s`,
      );
      const ids = created.map((outcome) => outcome.executionId);

      // Both processes approve run i at the same moment, startAt + i * 20 ms.
      const startAt = Date.now() + 300;
      const approvedAt = Date.now();
      const [fromFirst, fromSecond] = await Promise.all([
        first.ask<Summary[]>({ op: "approveMany", name, executionIds: ids, startAt, spacingMs: 20 }),
        second.ask<Summary[]>({ op: "approveMany", name, executionIds: ids, startAt, spacingMs: 20 }),
      ]);
      const approveSeconds = (Date.now() - approvedAt) / 1000;
      const losers: Record<string, number> = {};
      ids.forEach((executionId, index) => {
        const pair = [fromFirst[index]!, fromSecond[index]!];
        const winners = pair.filter((outcome) => outcome.status === "completed");
        expect(winners, `one approval of ${executionId} completes: ${JSON.stringify(pair)}`).toHaveLength(1);
        const loser = pair.find((outcome) => outcome.status !== "completed")!;
        expect(loser.status).toBe("error");
        expect(["NOT_PAUSED", "BUSY"], JSON.stringify(loser)).toContain(loser.code);
        losers[loser.code!] = (losers[loser.code!] ?? 0) + 1;
      });
      const effects = await backend.effects();
      for (const executionId of ids) expect(effects.get(`${executionId}:1`), `applied count of ${executionId}`).toBe(1);
      expect([...effects.values()].reduce((sum, count) => sum + count, 0)).toBe(ids.length);
      const statuses = await first.ask<string[]>({ op: "status", name, executionIds: ids });
      expect(new Set(statuses)).toEqual(new Set(["completed"]));
      const wins = {
        first: fromFirst.filter((outcome) => outcome.status === "completed").length,
        second: fromSecond.filter((outcome) => outcome.status === "completed").length,
      };
      console.log(
        `${backend.label}: ${ids.length} racing pairs in ${approveSeconds.toFixed(1)} s, wins ${JSON.stringify(wins)}, losers ${JSON.stringify(losers)}`,
      );
    }, 120_000);

    it("R-AP-6 approve racing reject across processes: applied at most once, and the outcomes agree with the stored state", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const created = await first.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: 40 });
      const ids = created.map((outcome) => outcome.executionId);
      const startAt = Date.now() + 300;
      const [approvals, rejections] = await Promise.all([
        first.ask<Summary[]>({ op: "approveMany", name, executionIds: ids, startAt, spacingMs: 20 }),
        second.ask<boolean[]>({ op: "rejectMany", name, executionIds: ids, seq: 1, startAt, spacingMs: 20 }),
      ]);
      const effects = await backend.effects();
      const statuses = await second.ask<string[]>({ op: "status", name, executionIds: ids });
      const tally = { approved: 0, rejected: 0 };
      ids.forEach((executionId, index) => {
        const approval = approvals[index]!;
        const rejected = rejections[index]!;
        const applied = effects.get(`${executionId}:1`) ?? 0;
        if (approval.status === "completed") {
          expect(rejected, `${executionId} was approved, so the rejection came too late`).toBe(false);
          expect(statuses[index]).toBe("completed");
          expect(applied).toBe(1);
          tally.approved += 1;
        } else {
          expect(rejected, `${executionId}: approval lost (${JSON.stringify(approval)}), so the rejection won`).toBe(
            true,
          );
          expect(["NOT_PAUSED", "BUSY"]).toContain(approval.code);
          expect(statuses[index]).toBe("rejected");
          expect(applied).toBe(0);
          tally.rejected += 1;
        }
      });
      console.log(`${backend.label}: approve vs reject over ${ids.length} runs: ${JSON.stringify(tally)}`);
    }, 60_000);

    it("R-AP-6 R-AP-9 racing decisions across processes (approve in one, edit in the other): exactly one applies, with its own arguments", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const created = await first.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: 20 });
      const ids = created.map((outcome) => outcome.executionId);
      const startAt = Date.now() + 300;
      const [approvals, edits] = await Promise.all([
        first.ask<Summary[]>({
          op: "decideMany",
          name,
          executionIds: ids,
          decisions: [{ seq: 1, decision: "approve" }],
          startAt,
          spacingMs: 20,
        }),
        second.ask<Summary[]>({
          op: "decideMany",
          name,
          executionIds: ids,
          decisions: [{ seq: 1, decision: "edit", args: { item: "edited" } }],
          startAt,
          spacingMs: 20,
        }),
      ]);
      const effects = await backend.effects();
      const tally = { approve: 0, edit: 0 };
      for (const [index, executionId] of ids.entries()) {
        const pair = [approvals[index]!, edits[index]!];
        expect(
          pair.filter((outcome) => outcome.status === "completed"),
          JSON.stringify(pair),
        ).toHaveLength(1);
        const loser = pair.find((outcome) => outcome.status !== "completed")!;
        expect(["NOT_PAUSED", "BUSY"], JSON.stringify(loser)).toContain(loser.code);
        expect(effects.get(`${executionId}:1`), `applied count of ${executionId}`).toBe(1);
        const log = await second.ask<Array<{ seq: number; args: unknown; decision?: { decision?: string } }>>({
          op: "log",
          name,
          executionId,
          full: true,
        });
        const winner = approvals[index]!.status === "completed" ? "approve" : "edit";
        expect(log[1]).toMatchObject({
          args: { item: winner === "edit" ? "edited" : "item-0" },
          decision: { decision: winner },
        });
        tally[winner] += 1;
      }
      console.log(`${backend.label}: approve vs edit over ${ids.length} runs: ${JSON.stringify(tally)}`);
    }, 60_000);

    it("R-ST-3 a run paused in one process completes after approve in another, which runs only the approved action", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const starter = await Worker.start(backend.config("starter"));
      extra.push(starter);
      const paused = await starter.ask<Summary>({ op: "execute", name, code: readThenApply });
      expect(paused.status).toBe("paused");
      await starter.stop();

      const done = await second.ask<Summary>({ op: "approve", name, executionId: paused.executionId });
      expect(done).toEqual({ executionId: paused.executionId, status: "completed" });
      expect((await backend.effects()).get(`${paused.executionId}:1`)).toBe(1);
      expect(await first.ask<string[]>({ op: "status", name, executionIds: [paused.executionId] })).toEqual([
        "completed",
      ]);
    }, 60_000);

    /**
     * Issue "fencing": a worker frozen (SIGSTOP) for three times its lease while another process
     * recovers and completes its run, then woken (SIGCONT). The woken pass must change nothing.
     */
    const frozenWorkerStory = async (options: {
      code: string;
      freezeOn: "slow" | "noted";
      recovered: Summary["status"];
    }) => {
      const name = runtimeName();
      const frozen = await Worker.start(backend.config("frozen", SHORT_LEASE_MS));
      extra.push(frozen);
      const wokenOutcome = frozen.ask<Summary>({ op: "execute", name, code: options.code });
      // Awaited below; a story that fails before that must not leave it rejecting unhandled.
      wokenOutcome.catch(() => undefined);
      const inside = await frozen.event(options.freezeOn, 20_000);
      process.kill(frozen.child.pid!, "SIGSTOP");
      const frozenAt = Date.now();
      const executionId = String(inside.executionId);
      try {
        // Recovered by another process once the frozen worker's lease lapsed.
        let recovered: Summary[] = [];
        while (recovered.length === 0) {
          expect(Date.now() - frozenAt, "the run is recovered once the frozen worker's lease lapsed").toBeLessThan(
            SHORT_LEASE_MS * 3,
          );
          await new Promise((resolve) => setTimeout(resolve, 100));
          recovered = await second.ask<Summary[]>({ op: "recover", name, executionId });
        }
        expect(recovered.map((outcome) => outcome.status)).toEqual([options.recovered]);
        if (options.recovered === "paused") {
          // The interrupted tool asks first (onInterrupted: "ask"): a person approves it here.
          expect(await second.ask<Summary>({ op: "approve", name, executionId })).toEqual({
            executionId,
            status: "completed",
          });
        }
        expect(await second.ask<string[]>({ op: "status", name, executionIds: [executionId] })).toEqual(["completed"]);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + SHORT_LEASE_MS * 3 - Date.now())));
      } finally {
        process.kill(frozen.child.pid!, "SIGCONT");
      }
      const before = await backend.raw(executionId);
      expect(Object.keys(before).length).toBeGreaterThanOrEqual(4);
      // The woken pass ends as taken over, without an unhandled error, and the worker lives on.
      const woken = await wokenOutcome;
      expect(woken).toMatchObject({ executionId, status: "error", code: "BUSY" });
      expect(woken.error).toMatch(/taken over/);
      expect(await frozen.ask<string[]>({ op: "status", name, executionIds: [executionId] })).toEqual(["completed"]);
      expect(frozen.exited).toBe(false);
      expect(frozen.stderr).toBe("");
      // Nothing the woken pass did reached the store: head, code, log and result are byte-identical.
      expect(await backend.raw(executionId)).toEqual(before);
      return { executionId, frozen };
    };

    it("R-ST-6: a worker frozen inside a tool for three times its lease, woken after another process completed the run, writes nothing and runs no further tool", async () => {
      if (cannotRun()) return;
      const { executionId } = await frozenWorkerStory({
        code: `async () => { await ledger.read({ i: 0 }); const slow = await ledger.slow({ ms: 300 }); await ledger.note({ item: "after" }); return slow; }`,
        freezeOn: "slow",
        recovered: "paused",
      });
      const effects = await backend.effects();
      // The tool running when the lease lapsed finished (at least once per idempotency key); the call after it ran once, in the recovering process.
      expect(effects.get(`${executionId}:1`)).toBeLessThanOrEqual(2);
      expect(effects.get(`${executionId}:2`)).toBe(1);
    }, 90_000);

    it("R-ST-6: a worker frozen between two calls for three times its lease, woken after another process completed the run, writes nothing and runs no further tool", async () => {
      if (cannotRun()) return;
      // The program spins after the first note, so the freeze lands between the two calls.
      const { executionId } = await frozenWorkerStory({
        code: `async () => { await ledger.note({ item: "first" }); let spin = 0; for (let i = 0; i < 300000000; i++) spin += i % 3; await ledger.note({ item: "second" }); return spin; }`,
        freezeOn: "noted",
        recovered: "completed",
      });
      const effects = await backend.effects();
      expect(effects.get(`${executionId}:0`)).toBe(1);
      expect(effects.get(`${executionId}:1`)).toBe(1);
    }, 90_000);

    it("R-RE-2 a worker killed with SIGKILL mid-pass: another process expires the run once its lease lapses, not before, and nothing recorded is lost", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const doomed = await Worker.start(backend.config("doomed", SHORT_LEASE_MS));
      extra.push(doomed);
      void doomed
        .ask({
          op: "execute",
          name,
          code: `async () => { await ledger.read({ i: 0 }); await ledger.stall({}); return "never"; }`,
        })
        .catch(() => undefined);
      const stalled = await doomed.event("stalled", 20_000);
      const executionId = String(stalled.executionId);
      await doomed.kill();

      // The lease is still live: the run looks like it has a host.
      expect(await first.ask<string[]>({ op: "expirePaused", name })).toEqual([]);
      const killedAt = Date.now();
      let expired: string[] = [];
      while (expired.length === 0 && Date.now() - killedAt < SHORT_LEASE_MS * 4) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expired = await first.ask<string[]>({ op: "expirePaused", name });
      }
      expect(expired).toEqual([executionId]);
      expect(Date.now() - killedAt).toBeGreaterThan(SHORT_LEASE_MS / 3);
      expect(await second.ask<string[]>({ op: "expirePaused", name })).toEqual([]);
      expect(await second.ask<string[]>({ op: "status", name, executionIds: [executionId] })).toEqual(["error"]);
      expect(await second.ask({ op: "log", name, executionId })).toEqual([
        { seq: 0, method: "read", state: "applied" },
        { seq: 1, method: "stall", state: "executing" },
      ]);
    }, 60_000);
  });
}
