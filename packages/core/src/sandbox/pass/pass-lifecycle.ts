import { errorMessage } from "../../error-message.js";
import type { PassRequest, PassResult, SandboxFailureCode } from "../executor.js";
import { type PassDefaults, sandboxConfigText } from "../sandbox-config.js";
import { abortReason } from "./abort-reason.js";
import { nextTurn } from "./event-loop-turn.js";
import type { PassRequests } from "./pass-requests.js";
import { classifyFailure, failed, finishPass, interpretResult, type PassEndings } from "./pass-result.js";
import { type ReadPass, readProgram } from "./read-program.js";

/** What a pass's watchdog does, whatever the engine (isolated-vm/isolate-watchdog.ts, quickjs/quickjs-watchdog.ts). */
export interface EngineWatchdog extends PassEndings {
  /** Resolves when the sandbox can run no more code: the pass must end now. */
  readonly dead: Promise<void>;
  /** Set when the engine itself failed while running code of the pass (QuickJS: its module). */
  readonly brokenBecause?: string | undefined;
  /** Ends the pass for a reason of the host's (the run was cancelled, the executor closed). */
  kill(reason: string): void;
  /** The pass has ended: its timers stop and nothing is ended on its account any more. */
  stop(): void;
}

/** A program that did not start: its code and message. */
export interface StartFailure {
  code: SandboxFailureCode;
  message: string;
}

/**
 * One sandbox of an engine (isolated-vm, QuickJS), made for one pass and driven through it by
 * `runEnginePass`: the seams where the engines differ, and nothing else.
 */
export interface EngineSandbox {
  readonly watchdog: EngineWatchdog;
  readonly bridge: PassRequests;
  /** Runs the prelude with the pass's configuration; throws when the sandbox could not be set up. */
  setUp(configText: string): Promise<void>;
  /**
   * Compiles the program's body (its line 1 is the code's line `lineOffset`) and runs its first
   * synchronous part; calls `compiled` as soon as the engine has compiled it. Resolves with why
   * it did not start (it does not compile), or undefined once it ran; throws when the sandbox
   * went away meanwhile (a limit, a kill: that is not the code's fault).
   */
  start(body: string, lineOffset: number, compiled: () => void): Promise<StartFailure | undefined>;
  /** A last look once the program ended, before its result is read (QuickJS checks its memory). */
  afterEnd?(): void;
  /** How the engine reads a program's own ending (QuickJS: its "out of memory" error is the memory limit). */
  interpret?(result: PassResult, pass: ReadPass): PassResult;
  /**
   * Gives the sandbox back: for another pass when `reusable` (the pass ended normally), for good
   * otherwise. Called once, on every path, before the pass answers.
   */
  release(reusable: boolean): Promise<void>;
}

/** An engine: where a pass gets its sandbox. */
export interface Engine {
  /** A sandbox for this pass with its watchdog armed for the pass's deadline; throws when none could be made. */
  open(request: PassRequest, pass: ReadPass): Promise<EngineSandbox>;
}

/**
 * The passes an executor runs on one engine: how many run now, and, for the executor's
 * `close()`, a way to end them all instead of leaving them waiting.
 */
export class EnginePasses {
  private readonly watchdogs = new Set<EngineWatchdog>();
  /** Passes running now. */
  count = 0;

  constructor(
    private readonly defaults: PassDefaults,
    private readonly engine: Engine,
  ) {}

  async run(request: PassRequest): Promise<PassResult> {
    this.count++;
    try {
      return await runEnginePass(request, this.defaults, this.engine, this.watchdogs);
    } finally {
      this.count--;
    }
  }

  /** Ends every pass running now: its watchdog kills its sandbox, and the pass answers at once. */
  endAll(): void {
    for (const watchdog of this.watchdogs) watchdog.kill("the executor was closed while the pass ran");
  }
}

/**
 * One pass, the same for every engine: read the program (read-program.ts), take a sandbox,
 * set it up, start the program, wait for how it ends (its end text, a halt, a stall of requests
 * waiting for a person, or the watchdog), let started host calls finish (R-RP-7), and turn the
 * ending into a result. The sandbox is given back before the pass answers, on every path, and a
 * cancel (`request.signal`) ends the pass as the deadline would. `running` holds the watchdogs
 * of passes running now, so that an executor's `close()` can end them.
 */
export async function runEnginePass(
  request: PassRequest,
  defaults: PassDefaults,
  engine: Engine,
  running: Set<EngineWatchdog>,
): Promise<PassResult> {
  return readProgram(request, defaults, async (pass) => {
    let sandbox: EngineSandbox;
    try {
      // A pass often starts from a completion of another pass: its sandbox work starts from the
      // loop's next check phase, so that passes cannot starve the loop's timers (event-loop-turn.ts).
      // A pass alone in its sandbox process has no other pass to make room for.
      if (request.ownsThread?.() !== true) await nextTurn();
      sandbox = await engine.open(request, pass);
    } catch (error) {
      return failed("SANDBOX_ERROR", `the sandbox could not be created: ${errorMessage(error)}`, pass.logs);
    }
    const { watchdog, bridge } = sandbox;
    const { limits, logs } = pass;
    running.add(watchdog);
    const stopOnAbort = () => watchdog.kill(abortReason(request.signal));
    if (request.signal?.aborted) stopOnAbort();
    request.signal?.addEventListener("abort", stopOnAbort, { once: true });
    let result: PassResult | undefined;
    try {
      result = await runProgram(sandbox, request, pass, defaults);
    } catch (error) {
      await bridge.settleDeliveries();
      result = await finishPass(classifyFailure(error, watchdog, bridge, limits, logs), bridge, limits, logs);
    } finally {
      request.signal?.removeEventListener("abort", stopOnAbort);
      running.delete(watchdog);
      watchdog.stop();
      bridge.end();
      await sandbox.release(result !== undefined && endedNormally(result, watchdog));
    }
    return result;
  });
}

/** Set up, start, and wait for the end; throws when the watchdog ended the pass (classifyFailure says how). */
async function runProgram(
  sandbox: EngineSandbox,
  request: PassRequest,
  pass: ReadPass,
  defaults: PassDefaults,
): Promise<PassResult> {
  const { watchdog, bridge } = sandbox;
  const { limits, logs, normalized } = pass;
  // Cancelled, or the executor closed, while the sandbox was being made.
  if (stopping(watchdog)) throw new Error(watchdog.brokenBecause ?? "the pass ended before its sandbox was set up");
  await sandbox.setUp(sandboxConfigText(request, defaults));
  let failure: StartFailure | undefined;
  try {
    failure = await sandbox.start(normalized.body, normalized.lineOffset, pass.endTurn);
  } finally {
    // From here, the next large program may be read (reading-gate.ts).
    pass.endTurn();
  }
  if (failure) return failed(failure.code, failure.message, logs);
  bridge.programStarted();
  const end = await bridge.ending(watchdog.dead);
  sandbox.afterEnd?.();
  if (end === "dead" || watchdog.outOfMemory || watchdog.brokenBecause !== undefined)
    throw new Error(watchdog.brokenBecause ?? "the sandbox ended while the program ran");
  if (end === "halted") return await finishPass({ status: "halted", logs: logs.lines }, bridge, limits, logs);
  const ended = interpretResult(end.text, logs, defaults.maxMessageChars);
  return await finishPass(sandbox.interpret?.(ended, pass) ?? ended, bridge, limits, logs);
}

function stopping(watchdog: EngineWatchdog): boolean {
  return (
    watchdog.timedOut ||
    watchdog.outOfMemory ||
    watchdog.killedBecause !== undefined ||
    watchdog.brokenBecause !== undefined
  );
}

/**
 * A pass whose sandbox may serve another: it ended by returning, by throwing, by not compiling or
 * by a host halt, with no limit hit and nothing ended by the host. A timeout, the memory limit, a
 * failure of the engine or a kill gives the sandbox up.
 */
function endedNormally(result: PassResult, watchdog: EngineWatchdog): boolean {
  if (stopping(watchdog)) return false;
  if (result.status !== "failed") return true;
  return (
    result.code === "PROGRAM_ERROR" ||
    result.code === "SANDBOX_ERROR" ||
    result.code === "NOT_SERIALIZABLE" ||
    result.code === "SYNTAX_ERROR"
  );
}
