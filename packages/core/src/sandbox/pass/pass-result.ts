import { errorMessage } from "../../error-message.js";
import type { PassResult, SandboxFailureCode } from "../executor.js";
import { RESULT_DENIED, RESULT_RETURNED, RESULT_THREW } from "../prelude/sandbox-setup.js";
import { CLIP_NOTE_CHARS, clipText } from "../sandbox-limits.js";
import type { LogCollector } from "./log-collector.js";
import type { PassRequests } from "./pass-requests.js";

/** The limits in force for one pass (the request's or the executor's defaults), for messages. */
export interface PassLimitsInForce {
  timeoutMs: number;
  memoryMb: number;
}

export function failed(code: SandboxFailureCode, error: string, logs: LogCollector): PassResult {
  return { status: "failed", code, error, logs: logs.lines };
}

/** The text `__codemode_start` reported (see install-start.ts) as a result; messages cut to `maxMessageChars`. */
export function interpretResult(text: string, logs: LogCollector, maxMessageChars: number): PassResult {
  if (typeof text !== "string" || text.length === 0)
    return failed("SANDBOX_ERROR", "the program ended without a result", logs);
  const kind = text[0];
  const rest = text.slice(1);
  if (kind === RESULT_RETURNED) return { status: "returned", value: rest, logs: logs.lines };
  if (kind === RESULT_DENIED) {
    try {
      const thrown = JSON.parse(rest) as { message?: unknown };
      const message = typeof thrown.message === "string" ? thrown.message : "the call was denied";
      return { status: "denied", error: clipText(message, maxMessageChars + CLIP_NOTE_CHARS), logs: logs.lines };
    } catch {
      return { status: "denied", error: "the call was denied", logs: logs.lines };
    }
  }
  if (kind === RESULT_THREW) {
    try {
      const thrown = JSON.parse(rest) as { message?: unknown; line?: unknown; column?: unknown };
      const message =
        typeof thrown.message === "string"
          ? clipText(thrown.message, maxMessageChars + CLIP_NOTE_CHARS)
          : "the program threw";
      const where =
        typeof thrown.line === "number" && typeof thrown.column === "number"
          ? ` (line ${thrown.line}, column ${thrown.column})`
          : "";
      // The program's own error, which it did not catch: a code of its own (R-RT-1).
      return failed("PROGRAM_ERROR", message + where, logs);
    } catch {
      return failed("PROGRAM_ERROR", "the program threw", logs);
    }
  }
  return failed(
    "NOT_SERIALIZABLE",
    `the result could not be returned: ${clipText(rest, maxMessageChars + CLIP_NOTE_CHARS)}`,
    logs,
  );
}

/** What a pass's watchdog saw (isolated-vm/isolate-watchdog.ts, quickjs/quickjs-watchdog.ts). */
export interface PassEndings {
  /** The deadline passed while the program ran. */
  timedOut: boolean;
  /** The sandbox went over its memory limit. */
  outOfMemory: boolean;
  /** Why the sandbox was ended by the host (the executor was closed). */
  killedBecause: string | undefined;
}

/** What the engine threw while a pass ran: a limit the watchdog saw, a halt, or a sandbox error. */
export function classifyFailure(
  error: unknown,
  watchdog: PassEndings,
  bridge: PassRequests,
  limits: PassLimitsInForce,
  logs: LogCollector,
): PassResult {
  const message = errorMessage(error);
  if (watchdog.timedOut || /timed out/i.test(message)) {
    return failed("TIMEOUT", `the program ran longer than the ${limits.timeoutMs} ms limit`, logs);
  }
  if (watchdog.outOfMemory || /memory limit/i.test(message)) {
    return failed("MEMORY_LIMIT", `the program used more memory than the ${limits.memoryMb} MB limit`, logs);
  }
  if (bridge.haltReplied) return { status: "halted", logs: logs.lines };
  if (watchdog.killedBecause !== undefined) return failed("SANDBOX_ERROR", watchdog.killedBecause, logs);
  return failed("SANDBOX_ERROR", message, logs);
}

/** After the program settled or halted: let started host work finish (R-RP-7), then report. */
export async function finishPass(
  result: PassResult,
  bridge: PassRequests,
  limits: PassLimitsInForce,
  logs: LogCollector,
): Promise<PassResult> {
  if (await bridge.waitForStartedCalls()) {
    return failed(
      "TIMEOUT",
      `calls the program started were still running when the ${limits.timeoutMs} ms limit was reached`,
      logs,
    );
  }
  // A halt (pause, divergence) decides the pass even if the program went on and returned.
  const hitLimit = result.status === "failed" && (result.code === "TIMEOUT" || result.code === "MEMORY_LIMIT");
  return bridge.haltReplied && !hitLimit ? { status: "halted", logs: logs.lines } : result;
}
