import type { PassRequest, PassResult, SandboxCrash } from "../executor.js";

/** A pass running in a sandbox process, as its parent follows it. */
export interface PassHere {
  onRequest: PassRequest["onRequest"];
  /** The host's answers still being worked out (tool calls running here). */
  inFlight: Set<Promise<void>>;
  resolve: (result: PassResult) => void;
  /** When the pass's time runs out (epoch ms). */
  deadline: number;
  timeoutMs: number;
  memoryMb: number;
  /** The highest seq the pass asked about. */
  lastSeq: number | undefined;
  /** Ends the process when the pass is still running `graceMs` past its deadline. */
  overdue: NodeJS.Timeout;
  abortTimer: NodeJS.Timeout | undefined;
  unlisten: () => void;
}

/** Why the parent ended a sandbox process (SIGKILL), kept to tell each of its passes how it ended. */
export type KillReason =
  /** These passes ran past their deadline by the grace: they end TIMEOUT; the others were in the way. */
  | { kind: "deadline"; passes: ReadonlySet<number> }
  /** This pass was aborted (its run cancelled) and did not stop: it ends with the abort's reason. */
  | { kind: "abort"; pass: number; message: string }
  /** The process held more memory than its cap; `pass` when only one ran in it. */
  | { kind: "memory"; pass: number | undefined; rssBytes: number; capBytes: number }
  /** The executor was closed. */
  | { kind: "closed" }
  /** The process could not be started or spoken to. */
  | { kind: "failed"; message: string };

/** What is known of one pass when its sandbox process ended. */
export interface PassAtExit {
  pass: number;
  killed: KillReason | undefined;
  /** Whether other passes ran in the process when it ended. */
  shared: boolean;
  /** Whether the process was started for this pass alone. */
  alone: boolean;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  lastSeq: number | undefined;
  /** The pass's time limit. */
  timeoutMs: number;
  /** The end of what the process wrote to its standard error. */
  stderrTail: string;
}

/** What V8 or Node write when a process ran out of memory and aborted. */
const OUT_OF_MEMORY = /out of memory|heap limit|CALL_AND_RETRY_LAST|allocation failed|OOM/i;

/**
 * How a pass ends when its sandbox process ended before the pass answered. A pass found to be the
 * cause ends with its limit's code (TIMEOUT, MEMORY_LIMIT) or SANDBOX_CRASHED; a pass that only
 * shared the process asks to run again (`crash.retry`): `"shared"` when another pass was the
 * cause, `"alone"` when any of them may have been (the runtime runs each suspect in a process of
 * its own, where a second crash is its own).
 */
export function passEndOnExit(at: PassAtExit): Extract<PassResult, { status: "failed" }> {
  const crash: SandboxCrash = {
    ...(at.exit.signal ? { signal: at.exit.signal } : {}),
    ...(at.exit.code !== null ? { exitCode: at.exit.code } : {}),
    ...(at.lastSeq !== undefined ? { lastSeq: at.lastSeq } : {}),
  };
  const how = describeExit(at);
  const end = (
    code: Extract<PassResult, { status: "failed" }>["code"],
    error: string,
    retry?: SandboxCrash["retry"],
  ): Extract<PassResult, { status: "failed" }> => ({
    status: "failed",
    code,
    error,
    logs: [],
    crash: retry ? { ...crash, retry } : crash,
  });
  const killed = at.killed;
  switch (killed?.kind) {
    case "deadline":
      return killed.passes.has(at.pass)
        ? end(
            "TIMEOUT",
            `the program ran longer than the ${at.timeoutMs} ms limit and did not stop, so its sandbox process was ended ${how}`,
          )
        : end(
            "SANDBOX_CRASHED",
            `another pass in its sandbox process ran past its time limit, so the process was ended ${how}`,
            "shared",
          );
    case "abort":
      return killed.pass === at.pass
        ? end("SANDBOX_ERROR", killed.message)
        : end(
            "SANDBOX_CRASHED",
            `another pass in its sandbox process did not stop when cancelled, so the process was ended ${how}`,
            "shared",
          );
    case "memory": {
      const held = `the sandbox process held ${megabytes(killed.rssBytes)} MB, over its ${megabytes(killed.capBytes)} MB cap`;
      if (killed.pass === at.pass || (!at.shared && killed.pass === undefined))
        return end(
          "MEMORY_LIMIT",
          `the program used more memory than its sandbox may hold: ${held}, so it was ended ${how}`,
        );
      if (killed.pass !== undefined)
        return end(
          "SANDBOX_CRASHED",
          `another pass in its sandbox process used too much memory, so the process was ended ${how}`,
          "shared",
        );
      return end(
        "SANDBOX_CRASHED",
        `${held} with other passes in it, so it was ended ${how}`,
        at.alone ? undefined : "alone",
      );
    }
    case "closed":
      return end("SANDBOX_ERROR", "the executor was closed while the pass ran");
    case "failed":
      return end("SANDBOX_CRASHED", `the sandbox process failed: ${killed.message}`, at.shared ? "shared" : undefined);
    case undefined:
      break;
  }
  // It ended by itself: whatever a pass did to it (an abort of V8, a native crash) is the cause.
  if (at.shared && !at.alone)
    return end("SANDBOX_CRASHED", `its sandbox process, shared with other passes, crashed ${how}`, "alone");
  if (OUT_OF_MEMORY.test(at.stderrTail))
    return end(
      "MEMORY_LIMIT",
      `the program used more memory than the engine could hold, and its sandbox process ended ${how}`,
    );
  return end("SANDBOX_CRASHED", `the program crashed its sandbox process ${how}`);
}

/** "(signal SIGABRT; the last call the host saw was seq 3)": what the parent saw of the process's end. */
function describeExit(at: PassAtExit): string {
  const { code, signal } = at.exit;
  const how = signal ? `signal ${signal}` : `exit code ${code}`;
  return at.lastSeq === undefined ? `(${how})` : `(${how}; the last call the host saw was seq ${at.lastSeq})`;
}

function megabytes(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/** Why a process ended before it was ready, for the passes and the pool. */
export function exitedBefore(code: number | null, signal: NodeJS.Signals | null, stderrTail: string): string {
  const how = signal ? `was ended by ${signal}` : `exited with code ${code}`;
  const said = stderrTail.trim().split("\n").slice(-3).join(" | ");
  return `the sandbox process ${how} before it was ready${said ? `: ${said}` : ""}`;
}

/** True when every promise in `work` settled by `deadline` (epoch ms); false when some still ran then. */
export async function settledBy(work: Set<Promise<void>>, deadline: number): Promise<boolean> {
  if (work.size === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    Promise.allSettled([...work]).then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    }),
  ]);
  clearTimeout(timer);
  return settled;
}

/** A pass that would run again, but whose calls still ran at its deadline: it timed out. */
export function stillRunning(result: Extract<PassResult, { status: "failed" }>): PassResult {
  const { retry: _retry, ...crash } = result.crash ?? {};
  return {
    status: "failed",
    code: "TIMEOUT",
    error: `calls the program started were still running at its time limit (its sandbox process had ended: ${result.error})`,
    logs: result.logs,
    crash,
  };
}

/**
 * Answers a pass of a process that ended. R-RP-7: calls the program started finish, and are
 * recorded, before the pass answers. One still running at the deadline is the pass's own
 * timeout, whoever ended the process.
 */
export function answerAtExit(pass: PassHere, atExit: PassAtExit): void {
  const result = passEndOnExit(atExit);
  void settledBy(pass.inFlight, pass.deadline).then((settled) =>
    pass.resolve(settled || result.status !== "failed" || !result.crash?.retry ? result : stillRunning(result)),
  );
}

/** What `byDeadline` answers when the deadline came first. */
export const LATE = Symbol("late");

/** What `work` resolves to, or LATE when `deadline` (epoch ms) comes first; `work` itself without one. */
export async function byDeadline<T>(work: Promise<T>, deadline: number | undefined): Promise<T | typeof LATE> {
  if (deadline === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A pass that waited for a process of its own past its deadline (process-host.ts `runAlone`). */
export function timedOutWaiting(timeoutMs: number): PassResult {
  return {
    status: "failed",
    code: "TIMEOUT",
    error: `the ${timeoutMs} ms limit ran out while the pass waited to run again in a sandbox process of its own`,
    logs: [],
  };
}
