import type { Executor, PassRequest, PassResult } from "../executor.js";
import { DEFAULT_ISOLATE_REUSE, type IsolateReuse, isolateReuseFromEnvironment } from "../isolated-vm/isolate-reuse.js";
import type { IsolatedVmExecutorOptions } from "../isolated-vm/isolated-vm-executor.js";
import type { QuickJsExecutorOptions } from "../quickjs/quickjs-executor.js";
import { DEFAULT_TIMEOUT_MS } from "../sandbox-config.js";
import { type EngineName, type PassData, passData, readsAhead, type SandboxHostData } from "./host-protocol.js";
import { byDeadline, LATE, timedOutWaiting } from "./process-pass-end.js";
import { SandboxProcess } from "./sandbox-process-handle.js";

export interface ProcessExecutorOptions extends IsolatedVmExecutorOptions, QuickJsExecutorOptions {
  /** The sandbox each process runs passes in: "isolated-vm" (default) or "quickjs". */
  engine?: EngineName;
  /** Sandbox processes kept; each pass goes to the one with the fewest running. Default 2. */
  processes?: number;
  /** Isolates each process keeps ready ahead of need (see `IsolatedVmExecutorOptions.prewarm`). Default 0. */
  prewarm?: number;
  /**
   * Resident memory a sandbox process may hold, in MB; one that holds more is ended and its
   * passes end MEMORY_LIMIT (or run again, when another pass may have been the cause). Default:
   * 384 MB, plus three times the memory limit of each pass running in it. Read from /proc: on
   * systems without it, only the engines' own limits apply.
   */
  processMemoryMb?: number;
  /** Passes a sandbox process serves before a fresh one takes its place. Default 5 000. */
  passesPerProcess?: number;
  /**
   * How long past its deadline a pass may go before its process is ended (the engine stops a
   * program at the deadline; this catches one the engine cannot stop, such as a loop inside a
   * built-in). Default 500 ms.
   */
  graceMs?: number;
}

/** The process executor: `warm()` starts the processes and resolves once they are ready. */
export interface ProcessExecutor extends Executor {
  anticipate(code: string): void;
  warm(): Promise<void>;
  /** Why sandbox processes cannot be used here (several in a row ended before they were ready), or undefined. */
  readonly unusable: string | undefined;
  /** Passes running, sandboxes alive and resident memory, over every sandbox process; processes ended for a limit or a crash. */
  stats(): Promise<ProcessExecutorStats>;
}

export interface ProcessExecutorStats {
  processes: number;
  /** Their process ids. */
  pids: number[];
  passesRunning: number;
  sandboxesLive: number;
  /** Resident memory of the sandbox processes, in all (0 where /proc cannot be read). */
  rssBytes: number;
  /** Sandbox processes that ended while passes ran in them (crashed, or ended for a limit). */
  processesLost: number;
  /** Passes whose program their process had read before they came (`anticipate`). */
  passesReadAhead: number;
  /** The same, each process on its own. */
  perProcess: Array<{ pid: number; passesRunning: number; sandboxesLive: number; rssBytes: number }>;
}

const DEFAULT_PROCESSES = 2;
const MAX_PROCESSES = 64;
const DEFAULT_PASSES_PER_PROCESS = 5_000;
const DEFAULT_GRACE_MS = 500;
/** How often the memory of busy sandbox processes is read. */
const MEMORY_CHECK_MS = 100;
/** How long `close()` lets a process end its passes and itself before it is ended. */
const CLOSE_GRACE_MS = 500;
/** How many passes a process still starting counts as, when the least busy process is chosen. */
const STARTING_WEIGHT = 4;
/** Processes started one after another that ended before they were ready: then the host is unusable. */
const STARTS_BEFORE_GIVING_UP = 3;

/**
 * Runs each pass in a sandbox process: a child process of this one, with its own engine
 * (isolated-vm or QuickJS) and a fresh context per pass. Whatever a program does there — an
 * abort of V8 on memory, a loop inside a built-in that no engine interrupts, memory without end —
 * ends that process at worst, never this one: its passes answer as data (TIMEOUT, MEMORY_LIMIT,
 * SANDBOX_CRASHED), a fresh process takes its place, and passes that only shared it ask to run
 * again (`SandboxCrash.retry`). Tool calls still run here, in the runtime's process. The
 * processes start with the first pass (or `warm()`), never keep this process alive while idle,
 * and get none of its environment but `CODEMODE_*`, `TZ` and the locale. See docs/security.md.
 *
 * @example
 * const runtime = createCodemodeRuntime({ connectors: [shop], executor: createProcessExecutor({ processes: 4 }) });
 */
export function createProcessExecutor(options: ProcessExecutorOptions = {}): ProcessExecutor {
  const {
    processes: processCount = DEFAULT_PROCESSES,
    engine = "isolated-vm",
    processMemoryMb,
    passesPerProcess = DEFAULT_PASSES_PER_PROCESS,
    graceMs = DEFAULT_GRACE_MS,
    ...sandboxOptions
  } = options;
  checkWhole("processes", processCount, 1, MAX_PROCESSES);
  checkWhole("passesPerProcess", passesPerProcess, 1, Number.MAX_SAFE_INTEGER);
  checkWhole("graceMs", graceMs, 0, 60_000);
  if (processMemoryMb !== undefined) checkWhole("processMemoryMb", processMemoryMb, 64, 1_048_576);
  const pool = new ProcessPool(
    { engine, options: { ...sandboxOptions, isolateReuse: splitIdle(sandboxOptions.isolateReuse, processCount) } },
    { processes: processCount, passesPerProcess, graceMs, processMemoryMb },
  );
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    get unusable() {
      return pool.unusable;
    },
    runPass: (request) => pool.runPass(request, request.timeoutMs ?? timeoutMs),
    anticipate: (code) => pool.anticipate(code),
    warm: () => pool.warm(),
    stats: () => pool.stats(),
    close: () => pool.close(),
  };
}

/**
 * Warm isolates kept idle, shared out among the processes: the idle ones of a process count
 * against the same bound as the idle ones of an in-process executor, not once per process. An
 * explicit `maxIdle` is per process; `false` stays off.
 */
function splitIdle(option: IsolateReuse | boolean | undefined, processes: number): IsolateReuse | boolean | undefined {
  if (option === false) return false;
  if (isolateReuseFromEnvironment() === false && option === undefined) return undefined;
  const given = typeof option === "object" && option !== null ? option : {};
  if (given.maxIdle !== undefined) return given;
  return { ...given, maxIdle: Math.ceil(DEFAULT_ISOLATE_REUSE.maxIdle / processes) };
}

function checkWhole(name: string, value: number, least: number, most: number): void {
  if (!Number.isSafeInteger(value) || value < least || value > most)
    throw new TypeError(`createProcessExecutor: ${name} must be a whole number from ${least} to ${most}`);
}

interface PoolSettings {
  processes: number;
  passesPerProcess: number;
  graceMs: number;
  processMemoryMb: number | undefined;
}

/** The sandbox processes of one executor: a fixed number shared by passes, and one per pass run alone. */
class ProcessPool {
  private readonly slots: Array<SandboxProcess | undefined>;
  /** Processes started for one pass each, and the passes waiting for a place among them. */
  private readonly alone = new Set<SandboxProcess>();
  private readonly aloneQueue: Array<() => void> = [];
  /** Processes no longer in a slot that still run passes (recycled); ended once idle. */
  private readonly retiring = new Set<SandboxProcess>();
  private memoryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private used = false;
  private failedStarts = 0;
  unusable: string | undefined;
  private processesLost = 0;

  constructor(
    private readonly data: SandboxHostData,
    private readonly settings: PoolSettings,
  ) {
    this.slots = new Array(settings.processes).fill(undefined);
  }

  async runPass(request: PassRequest, timeoutMs: number): Promise<PassResult> {
    this.used = true;
    const data = passData(request);
    if (request.alone) return this.runAlone(request, data, timeoutMs);
    // A process that ended before it was ready is replaced; after a few in a row, the host is unusable.
    for (;;) {
      if (this.closed) return sandboxError("the executor was closed");
      if (this.unusable) return sandboxError(this.unusable);
      this.fillSlots();
      const chosen = this.least();
      if (!chosen) return sandboxError("no sandbox process could be started");
      // Sent at once, so that the next pass already counts it when it picks the least busy process.
      if (chosen.isReady) return this.send(chosen, request, data, timeoutMs);
      // A process still starting: the pass waits for it, counted there meanwhile (passes that
      // come together at the start spread over the processes, not all to the first one ready).
      chosen.waitingPasses++;
      const problem = await chosen.ready;
      chosen.waitingPasses--;
      if (this.closed) return sandboxError("the executor was closed");
      if (problem === undefined && !chosen.exited && !chosen.retiring)
        return this.send(chosen, request, data, timeoutMs);
    }
  }

  /** A pass of `code` is about to come: the process it would be sent to now reads it, if it runs no pass. */
  anticipate(code: string): void {
    if (this.closed || this.unusable || !readsAhead(code)) return;
    const chosen = this.least();
    if (chosen?.isReady && chosen.passCount === 0) chosen.expect(code);
  }

  async warm(): Promise<void> {
    this.used = true;
    this.fillSlots(true);
    await Promise.all(
      this.slots.map(async (sandbox) => {
        if (sandbox && (await sandbox.ready) === undefined) await sandbox.warm();
      }),
    );
  }

  async stats(): Promise<ProcessExecutorStats> {
    const live = [...this.slots, ...this.alone, ...this.retiring].filter(
      (sandbox): sandbox is SandboxProcess => sandbox !== undefined && !sandbox.exited,
    );
    const counts = await Promise.all(live.map((sandbox) => sandbox.stats()));
    const total = { processes: 0, pids: [] as number[], passesRunning: 0, sandboxesLive: 0, rssBytes: 0 };
    let passesReadAhead = 0;
    const perProcess: ProcessExecutorStats["perProcess"] = [];
    for (const [index, count] of counts.entries()) {
      if (!count) continue;
      total.processes++;
      const pid = live[index]?.child.pid;
      if (pid !== undefined) {
        total.pids.push(pid);
        perProcess.push({
          pid,
          passesRunning: count.passesRunning,
          sandboxesLive: count.sandboxesLive,
          rssBytes: count.rssBytes ?? 0,
        });
      }
      total.passesRunning += count.passesRunning;
      total.sandboxesLive += count.sandboxesLive;
      total.rssBytes += count.rssBytes ?? 0;
      passesReadAhead += count.passesReadAhead ?? 0;
    }
    return { ...total, processesLost: this.processesLost, passesReadAhead, perProcess };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.memoryTimer);
    const all = [...this.slots, ...this.alone, ...this.retiring].filter(
      (sandbox): sandbox is SandboxProcess => sandbox !== undefined,
    );
    this.slots.fill(undefined);
    for (const wake of this.aloneQueue.splice(0)) wake();
    await Promise.all(all.map((sandbox) => sandbox.close(CLOSE_GRACE_MS)));
  }

  /** Sends the pass to a process that is ready; its passes count it at once. */
  private send(sandbox: SandboxProcess, request: PassRequest, data: PassData, timeoutMs: number): Promise<PassResult> {
    this.watchMemory();
    const inPlace = this.mayStartInPlace(sandbox);
    const result = sandbox.runPass(request, { ...data, startInPlace: inPlace }, timeoutMs);
    if (inPlace) {
      sandbox.startedInPlace++;
      void result.finally(() => sandbox.startedInPlace--);
    }
    // Its last pass is under way: a fresh process takes its slot, and it ends once that pass has.
    if (sandbox.passesSent >= this.settings.passesPerProcess) this.retire(sandbox);
    return result;
  }

  /**
   * Whether a pass sent to `sandbox` now may start on the process's own thread, where a program
   * that loops from its start holds it: when the process is the pass's alone, or runs no other
   * pass and the next pass has somewhere else to go (an idle process, or a slot to start one in).
   */
  private mayStartInPlace(sandbox: SandboxProcess): boolean {
    if (sandbox.alone) return true;
    const free = (other: SandboxProcess | undefined) =>
      !other || (!other.exited && !other.retiring && other.passCount === 0);
    return sandbox.passCount === 0 && this.slots.some((other) => other !== sandbox && free(other));
  }

  /**
   * A pass in a process of its own, at most `processes` such at once (the others wait their turn).
   * A pass whose time began before (`startedAt`: one that runs again after a crash) waits for its
   * turn and its process no longer than its deadline: then it ends TIMEOUT, unsent.
   */
  private async runAlone(request: PassRequest, data: PassData, timeoutMs: number): Promise<PassResult> {
    const deadline = request.startedAt === undefined ? undefined : request.startedAt + timeoutMs;
    while (this.alone.size >= this.settings.processes && !this.closed) {
      let wake: () => void = () => undefined;
      const turn = new Promise<void>((resolve) => {
        wake = resolve;
        this.aloneQueue.push(resolve);
      });
      if ((await byDeadline(turn, deadline)) === LATE) {
        const waiting = this.aloneQueue.indexOf(wake);
        // Still in the queue: leave it; woken meanwhile: the turn goes to the next in line.
        if (waiting >= 0) this.aloneQueue.splice(waiting, 1);
        else this.aloneQueue.shift()?.();
        return timedOutWaiting(timeoutMs);
      }
    }
    if (this.closed) return sandboxError("the executor was closed");
    const sandbox = this.start(true);
    this.alone.add(sandbox);
    try {
      const problem = await byDeadline(sandbox.ready, deadline);
      if (problem === LATE) return timedOutWaiting(timeoutMs);
      if (problem !== undefined) return sandboxError(problem);
      return await this.send(sandbox, request, data, timeoutMs);
    } finally {
      this.alone.delete(sandbox);
      void sandbox.close(CLOSE_GRACE_MS);
      this.aloneQueue.shift()?.();
    }
  }

  /**
   * The least busy of the slots' processes (passes waiting for one that starts count as its own).
   * A process still starting counts as `STARTING_WEIGHT` passes more: a pass should not wait for
   * a process to start while another is ready and not much busier. One running a pass started in
   * place counts as more still: its thread may be held by a loop, and the pass goes to a process
   * that starts rather than wait behind it.
   */
  private least(): SandboxProcess | undefined {
    let least: SandboxProcess | undefined;
    const load = (sandbox: SandboxProcess) =>
      sandbox.passCount +
      (sandbox.isReady ? 0 : STARTING_WEIGHT) +
      (sandbox.startedInPlace > 0 ? STARTING_WEIGHT + 1 : 0);
    for (const sandbox of this.slots) {
      if (!sandbox || sandbox.exited) continue;
      if (!least || load(sandbox) < load(least)) least = sandbox;
    }
    return least;
  }

  /**
   * Starts processes in empty slots: every one with `all` (`warm()`), otherwise one, and only
   * when every live process has work (or none lives). A runtime that runs one pass at a time
   * starts one process, not `processes` of them (each costs a Node start, about a quarter of a
   * second of CPU); passes that come together start the others, as before.
   */
  private fillSlots(all = false): void {
    if (this.closed || this.unusable) return;
    const live = (sandbox: SandboxProcess | undefined): sandbox is SandboxProcess =>
      sandbox !== undefined && !sandbox.exited && !sandbox.retiring;
    if (!all && this.slots.some((sandbox) => live(sandbox) && sandbox.passCount === 0)) return;
    for (let slot = 0; slot < this.slots.length; slot++) {
      if (live(this.slots[slot])) continue;
      this.slots[slot] = this.start(false);
      if (!all) return;
    }
  }

  private start(alone: boolean): SandboxProcess {
    const sandbox = new SandboxProcess(this.data, this.settings, alone);
    void sandbox.ready.then((problem) => {
      if (problem === undefined) this.failedStarts = 0;
      else if (++this.failedStarts >= STARTS_BEFORE_GIVING_UP) this.unusable = problem;
    });
    void sandbox.whenExited().then(() => this.ended(sandbox));
    return sandbox;
  }

  /** A process ended: its slot gets a fresh one (if passes ran here before), a retired one is forgotten. */
  private ended(sandbox: SandboxProcess): void {
    this.retiring.delete(sandbox);
    if (sandbox.endedWithPasses) this.processesLost++;
    const slot = this.slots.indexOf(sandbox);
    if (slot < 0) return;
    this.slots[slot] = undefined;
    // Kept warm: the next pass should not wait for a process to start.
    if (this.used && !this.closed && !this.unusable) this.fillSlots();
  }

  private retire(sandbox: SandboxProcess): void {
    const slot = this.slots.indexOf(sandbox);
    if (slot < 0) return;
    sandbox.retire();
    this.slots[slot] = undefined;
    this.retiring.add(sandbox);
    void sandbox.whenIdle().then(() => sandbox.close(CLOSE_GRACE_MS));
    this.fillSlots();
  }

  /** Reads the memory of busy processes while any runs a pass. */
  private watchMemory(): void {
    if (this.memoryTimer) return;
    this.memoryTimer = setInterval(() => {
      const busy = [...this.slots, ...this.alone, ...this.retiring].filter(
        (sandbox): sandbox is SandboxProcess => sandbox !== undefined && sandbox.passCount > 0,
      );
      for (const sandbox of busy) sandbox.checkMemory();
      if (busy.length === 0) {
        clearInterval(this.memoryTimer);
        this.memoryTimer = undefined;
      }
    }, MEMORY_CHECK_MS);
    this.memoryTimer.unref();
  }
}

function sandboxError(error: string): PassResult {
  return { status: "failed", code: "SANDBOX_ERROR", error, logs: [] };
}
