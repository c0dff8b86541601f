/**
 * Hostile programs in the fleet (R-SB-8): three BullMQ workers run ordinary runs and, among them,
 * programs that abort V8 on memory, backtrack without end or never stop. With sandbox processes
 * (the default host) no worker process dies, each hostile run ends terminal with its code, its
 * job completes once and is never retried into a crash loop, the ordinary runs complete, and
 * `codemode recover` leaves such a run alone and says why. On Redis and on PostgreSQL alone.
 * Real child processes importing the BUILT packages: run `npm run build` first (CI does).
 */
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createCodemodeQueue } from "@codemode/bullmq";
import type { CodemodeRuntime, ExecutionState } from "@codemode/core";
import { tcpUnreachable } from "@codemode/storage/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { codemode } from "./cli-fixtures/run-cli.ts";
import { backends } from "./fleet-processes/backends.ts";
import { type Child, spawn } from "./fleet-processes/children.ts";
import {
  type FleetConfig,
  openLedger,
  openRuntime,
  openStorage,
  PROGRAM,
  queueConnection,
} from "./fleet-processes/shared.ts";

const CONFIG_MODULE = fileURLToPath(new URL("./fleet-processes/codemode.config.ts", import.meta.url));
const ORDINARY = 10;
const DEADLINE_MS = 90_000;

/** Programs that end a sandbox process, or would hold it past their deadline without one. */
const HOSTILE = [
  "async () => { const m = new Map(); let i = 0; for (;;) m.set(i++, { i, s: 'v' + i }); }",
  "async () => { const o = {}; for (let i = 0; ; i++) o['k' + i] = i; }",
  "async () => { let s = 'ab'; for (;;) s = s + s + Math.random(); }",
  "async () => /(a+)+$/.test('a'.repeat(64) + 'b')",
  "async () => { await ledger.step({ n: 0 }); for (;;) {} }",
];
/** How a hostile run may end: a limit, a crash, or the Array guard's refusal (a RangeError). */
const ENDINGS = ["MEMORY_LIMIT", "TIMEOUT", "SANDBOX_CRASHED", "SANDBOX_ERROR", "PROGRAM_ERROR"];

for (const backend of backends) {
  describe(`hostile programs in a fleet on ${backend.name === "redis" ? "Redis" : "PostgreSQL alone"}`, () => {
    let unavailable: string | undefined;
    beforeAll(async () => {
      unavailable = await tcpUnreachable(backend.url);
      if (unavailable && process.env.CI)
        throw new Error(`${backend.name} is not reachable (${unavailable}); CI must provide it`);
    });

    it("R-SB-8: no worker dies, each hostile run ends with its code and its job is not retried, the others complete, and recover leaves them and says why", {
      timeout: 150_000,
    }, async () => {
      if (unavailable) return void console.warn(`story not run: ${backend.name} is not reachable (${unavailable})`);
      const space = `hostile-${randomUUID().slice(0, 8)}`;
      const config: FleetConfig = {
        backend: backend.name,
        url: backend.url,
        space,
        leaseMs: 1_000,
        lockDurationMs: 1_000,
        stalledIntervalMs: 500,
        concurrency: 4,
        callMs: [20, 60],
        workerId: "submitter",
        limits: { timeoutMs: 3_000, memoryMb: 64 },
      };
      await backend.prepare(space);
      const storage = openStorage(config);
      const ledger = await openLedger(config);
      const runtime: CodemodeRuntime = openRuntime(config, storage, ledger);
      const queue = createCodemodeQueue({
        runtime,
        connection: queueConnection(config),
        name: space,
        retry: { delayMs: 100 },
        logger: { warn() {} },
      });
      const children: Child[] = [];
      try {
        await queue.ready();
        const approver = spawn("approver", { ...config, workerId: "approver" });
        children.push(approver);
        await approver.message("ready");
        const workers = [0, 1, 2].map((slot) => spawn("worker", { ...config, workerId: `w${slot}` }));
        children.push(...workers);
        await Promise.all(workers.map((worker) => worker.message("ready")));

        const ordinary: string[] = [];
        const hostile: string[] = [];
        for (let index = 0; index < ORDINARY; index++) {
          const submitted = await queue.submit({ code: PROGRAM });
          if ("status" in submitted) throw new Error(`submit failed: ${submitted.code} ${submitted.error}`);
          ordinary.push(submitted.executionId);
          const program = HOSTILE[index];
          if (program === undefined) continue;
          const attack = await queue.submit({ code: program });
          if ("status" in attack) throw new Error(`submit failed: ${attack.code} ${attack.error}`);
          hostile.push(attack.executionId);
        }

        const ended = new Map<string, ExecutionState>();
        const started = Date.now();
        while (ended.size < ordinary.length + hostile.length && Date.now() - started < DEADLINE_MS) {
          for (const id of [...ordinary, ...hostile]) {
            if (ended.has(id)) continue;
            const state = await runtime.execution(id);
            if (state && ["completed", "error", "rejected"].includes(state.status)) ended.set(id, state);
          }
          await new Promise((resolve) => setTimeout(resolve, 300));
        }

        // No worker process died: each is the one started, still running.
        for (const worker of workers) {
          expect(worker.process.exitCode, worker.stderr.slice(-3).join(" | ")).toBeNull();
          expect(worker.process.signalCode).toBeNull();
        }
        for (const id of ordinary) expect(ended.get(id)?.status, id).toBe("completed");
        for (const id of hostile) {
          const state = ended.get(id);
          expect(state?.status, id).toBe("error");
          expect(ENDINGS).toContain(state?.errorCode);
          if (state?.errorCode === "PROGRAM_ERROR") expect(state.error).toContain("RangeError");
        }

        // Each hostile run's job completed once, with the run's error: nothing retried it into a
        // crash loop, and no job of it is left waiting, delayed or failed.
        const completions = workers.flatMap((worker) => worker.messages("completed"));
        for (const id of hostile) {
          const own = completions.filter((completion) => String(completion.jobId).includes(id));
          expect(own, id).toHaveLength(1);
          expect(own[0]).toMatchObject({ status: "error" });
        }
        const left = await queue.bullmq.getJobs(["waiting", "active", "delayed", "failed"]);
        for (const id of hostile) expect(left.filter((job) => job.id?.includes(id))).toEqual([]);

        // An operator's recover leaves each of them as it is, and says why.
        const environment = { CODEMODE_FLEET_CONFIG: JSON.stringify(config) };
        const before = ended.get(hostile[0]!)!;
        const asked = await codemode(["recover", hostile[0]!, "--config", CONFIG_MODULE], environment);
        expect(asked.code, asked.stderr).toBe(0);
        expect(asked.stdout).toContain(`Nothing to recover: ${hostile[0]} ended`);
        expect(asked.stdout).toContain(before.errorCode!);
        expect((await runtime.execution(hostile[0]!))?.updatedAt).toBe(before.updatedAt);
        const all = await codemode(["recover", "--config", CONFIG_MODULE], environment);
        expect(all.code, all.stderr).toBe(0);
        expect(all.stdout).toContain("Nothing to recover.");
      } finally {
        for (const child of children) await child.stop("SIGTERM");
        await queue.close();
        await runtime.close();
        await storage.close();
        await ledger.close();
        await backend.cleanup(space);
      }
    });
  });
}
