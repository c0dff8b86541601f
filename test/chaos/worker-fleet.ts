/**
 * The three worker processes of a chaos test, and the chaos done to them: round robin over the
 * slots, a worker SIGKILLed and a new one started in its slot (a supervisor restarting a crashed
 * process), or frozen (SIGSTOP) past its lease and woken (SIGCONT), as in test/fleet.test.ts.
 *
 * A worker that exits on its own — not killed by the chaos or stopped at the end — is a death:
 * it is recorded with its last stderr lines and its slot stays empty (restarting it would hide it).
 */
import { type Child, spawn } from "../fleet-processes/children.ts";
import type { FleetConfig } from "../fleet-processes/shared.ts";

export interface WorkerDeath {
  workerId: string;
  code: number | null;
  signal: string | null;
  startedAt: number;
  /** Whether it had said "ready" (BullMQ connected) before it died. */
  wasReady: boolean;
  at: number;
  /** Its last stderr lines. */
  stderr: string[];
}

interface Slot {
  child: Child;
  workerId: string;
  frozen: boolean;
  dead: boolean;
}

/** Every worker process alive now, killed if the test process exits without stopping them. */
const alive = new Set<Child>();
process.on("exit", () => {
  for (const child of alive) {
    try {
      child.process.kill("SIGKILL");
    } catch {
      // Gone.
    }
  }
});

export class WorkerFleet {
  readonly deaths: WorkerDeath[] = [];
  kills = 0;
  freezes = 0;
  /** Every worker ever started, in order (their messages and stderr stay readable). */
  readonly everyWorker: Array<{ workerId: string; child: Child }> = [];
  private readonly slots: Slot[] = [];
  /** Workers this test ended on purpose (a chaos kill, the final stop): their exit is no death. */
  private readonly ended = new WeakSet<Child>();
  private chaos: NodeJS.Timeout | undefined;
  private readonly thaws = new Map<NodeJS.Timeout, Slot>();
  private rounds = 0;

  constructor(
    private readonly config: FleetConfig,
    private readonly size = 3,
  ) {}

  /** Starts the workers and waits until each is ready (the store is up at this point). */
  async start(): Promise<void> {
    for (let slot = 0; slot < this.size; slot++) this.slots.push(this.launch(`w${slot}.0`));
    await Promise.all(this.slots.map((slot) => slot.child.message("ready")));
  }

  /** Every `everyMs`, the next slot's worker is killed and replaced, or frozen for `freezeMs`. */
  startChaos(everyMs: number, freezeMs: number): void {
    this.chaos = setInterval(() => this.round(freezeMs), everyMs);
  }

  /** Ends the chaos and wakes every frozen worker. */
  stopChaos(): void {
    clearInterval(this.chaos);
    for (const [thaw, slot] of this.thaws) {
      clearTimeout(thaw);
      this.thaw(slot);
    }
    this.thaws.clear();
  }

  /** Messages named `name` from every worker ever started. */
  messages(name: string): Array<Record<string, unknown> & { workerId: string }> {
    return this.everyWorker.flatMap(({ workerId, child }) =>
      child.messages(name).map((message) => ({ ...message, workerId })),
    );
  }

  /** Workers alive now (not dead, not killed). */
  get living(): number {
    return this.slots.filter((slot) => !slot.dead).length;
  }

  /** Stops every worker gracefully (SIGTERM; SIGKILL after 10 s). */
  async stop(): Promise<void> {
    this.stopChaos();
    for (const slot of this.slots) this.ended.add(slot.child);
    await Promise.all(this.slots.map((slot) => slot.child.stop("SIGTERM")));
  }

  private launch(workerId: string): Slot {
    const child = spawn("worker", { ...this.config, workerId });
    const startedAt = Date.now();
    const slot: Slot = { child, workerId, frozen: false, dead: false };
    alive.add(child);
    this.everyWorker.push({ workerId, child });
    child.process.once("exit", (code, signal) => {
      alive.delete(child);
      if (this.ended.has(child)) return;
      slot.dead = true;
      const wasReady = child.messages("ready").length > 0;
      // Its own lines (the worker script says why it ends), else the end of what Node printed.
      const own = child.stderr.filter((line) => line.startsWith(`${workerId}: `));
      const stderr = own.length > 0 ? own.slice(-5) : child.stderr.slice(-8);
      this.deaths.push({ workerId, code, signal, startedAt, wasReady, at: Date.now(), stderr });
    });
    return slot;
  }

  private round(freezeMs: number): void {
    const index = this.rounds % this.slots.length;
    const killing = Math.floor(this.rounds / this.slots.length) % 2 === 0;
    this.rounds++;
    const slot = this.slots[index] as Slot;
    // A dead slot stays empty; a frozen worker is never killed (its turn comes after the thaw).
    if (slot.dead || slot.frozen) return;
    if (killing) {
      this.kills++;
      this.ended.add(slot.child);
      slot.child.process.kill("SIGKILL");
      this.slots[index] = this.launch(`w${index}.${this.rounds}`);
      return;
    }
    this.freezes++;
    slot.frozen = true;
    slot.child.process.kill("SIGSTOP");
    const thaw = setTimeout(() => {
      this.thaws.delete(thaw);
      this.thaw(slot);
    }, freezeMs);
    this.thaws.set(thaw, slot);
  }

  private thaw(slot: Slot): void {
    slot.frozen = false;
    if (slot.child.process.exitCode === null && slot.child.process.signalCode === null)
      slot.child.process.kill("SIGCONT");
  }
}
