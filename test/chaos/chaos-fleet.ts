/**
 * A fleet over one of the chaos tests' own servers: runs in `redisStorage` and BullMQ on that
 * Redis, or `postgresStorage` and BullMQ's PostgreSQL backend on that PostgreSQL; the ledger in a
 * folder, so it stays the truth while the server is down; three worker processes; the test's own
 * runtime and queue (the web process); and a watcher that follows every run handed out.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CodemodeQueue, createCodemodeQueue } from "@codemode/bullmq";
import type { CodemodeRuntime } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import {
  type FleetConfig,
  type Ledger,
  openLedger,
  openRuntime,
  openStorage,
  queueConnection,
} from "../fleet-processes/shared.ts";
import type { StoreServer } from "./managed-server.ts";
import { type PendingApprover, startPendingApprover } from "./pending-approver.ts";
import { Submitter } from "./submitter.ts";
import { within } from "./timing.ts";
import { WorkerFleet } from "./worker-fleet.ts";

/** Leases of 2 s: a freeze of 6 s outlives them, and a store down 0–2 s sometimes does. */
export const LEASE_MS = 2_000;

export interface ChaosFleet {
  config: FleetConfig;
  storage: CodemodeStorage;
  ledger: Ledger;
  runtime: CodemodeRuntime;
  queue: CodemodeQueue;
  workers: WorkerFleet;
  /** `stalled` events heard: jobs handed over after their worker died or froze. */
  stalled(): number;
  /** Stops the workers and closes everything the fleet opened (the server stays). */
  close(): Promise<void>;
}

/** A fleet with what every chaos story runs beside it: a submitter, a watcher of its runs, an approver. */
export interface ChaosRun {
  fleet: ChaosFleet;
  submitter: Submitter;
  watcher: RunWatcher;
  approver: PendingApprover;
  /** Stops the approver and the watcher, then closes the fleet. */
  close(): Promise<void>;
}

export async function openChaosRun(server: StoreServer): Promise<ChaosRun> {
  const fleet = await openChaosFleet(server);
  const submitter = new Submitter(fleet.queue);
  const watcher = new RunWatcher(fleet.runtime, submitter);
  const approver = startPendingApprover(fleet.runtime, fleet.queue, fleet.ledger);
  return {
    fleet,
    submitter,
    watcher,
    approver,
    async close() {
      await approver.stop();
      await watcher.stop();
      await fleet.close();
    },
  };
}

async function openChaosFleet(server: StoreServer): Promise<ChaosFleet> {
  const ledgerDir = mkdtempSync(join(tmpdir(), "codemode-chaos-ledger-"));
  const config: FleetConfig = {
    backend: server.kind,
    url: server.url,
    space: `chaos-${randomUUID().slice(0, 8)}`,
    leaseMs: LEASE_MS,
    lockDurationMs: LEASE_MS,
    stalledIntervalMs: LEASE_MS / 2,
    concurrency: 4,
    callMs: [10, 40],
    workerId: "submitter",
    ledgerDir,
  };
  const storage = openStorage(config);
  const ledger = await openLedger(config);
  const runtime = openRuntime(config, storage, ledger);
  const queue = createCodemodeQueue({
    runtime,
    connection: queueConnection(config),
    name: config.space,
    retry: { delayMs: 100 },
    logger: { warn() {} },
  });
  let stalled = 0;
  queue.events.on("stalled", () => stalled++);
  await queue.ready();
  const workers = new WorkerFleet(config);
  await workers.start();
  return {
    config,
    storage,
    ledger,
    runtime,
    queue,
    workers,
    stalled: () => stalled,
    async close() {
      await workers.stop();
      await queue.close();
      await runtime.close();
      await storage.close();
      await ledger.close();
      rmSync(ledgerDir, { recursive: true, force: true });
    },
  };
}

/**
 * Follows every run handed out, once a second: which completed, and which were seen ended in
 * `error` on the way (a store fault the run met). Reads that fail (the store is down) are skipped.
 */
export class RunWatcher {
  readonly completed = new Set<string>();
  /** Handed-out ids of submits that were not accepted, found absent from the store. */
  readonly absent = new Set<string>();
  /** Runs seen in `error`, with the code. */
  readonly sawError = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();

  constructor(
    private readonly runtime: CodemodeRuntime,
    private readonly submitter: Submitter,
  ) {}

  start(everyMs = 1_000): void {
    const tick = () => {
      this.polling = this.poll().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, everyMs);
      });
    };
    this.timer = setTimeout(tick, everyMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /** Every accepted run completed, every other id handed out completed or absent. */
  drained(): boolean {
    const accepted = new Set(this.submitter.accepted);
    return this.submitter.handedOut.every((id) => this.completed.has(id) || (!accepted.has(id) && this.absent.has(id)));
  }

  private async poll(): Promise<void> {
    const accepted = new Set(this.submitter.accepted);
    const open = this.submitter.handedOut.filter((id) => !this.completed.has(id) && !this.absent.has(id));
    for (let at = 0; at < open.length; at += 25) {
      try {
        const batch = Promise.all(
          open.slice(at, at + 25).map(async (id) => {
            const state = await this.runtime.execution(id);
            if (state === null) {
              if (!accepted.has(id)) this.absent.add(id);
            } else if (state.status === "completed") this.completed.add(id);
            else if (state.status === "error") this.sawError.set(id, state.errorCode ?? "?");
          }),
        );
        // Reads that hang are left behind; the next poll reads those runs again.
        if ((await within(batch, 10_000)) === undefined) return;
      } catch {
        return;
      }
    }
  }
}
