import { type NormalizedCode, normalizeCode } from "../code/normalize-code.js";
import type { PassRequest, PassResult } from "../executor.js";
import type { PassDefaults } from "../sandbox-config.js";
import { MAX_CODE_CHARS } from "../sandbox-limits.js";
import { LogCollector } from "./log-collector.js";
import { failed, type PassLimitsInForce } from "./pass-result.js";
import { LARGE_PROGRAM_CHARS, takeReadingTurn } from "./reading-gate.js";

/** A pass whose program was read: what either executor runs it with. */
export interface ReadPass {
  limits: PassLimitsInForce;
  /** When the pass's time runs out (epoch ms), counted from before the program was read. */
  deadline: number;
  logs: LogCollector;
  normalized: Extract<NormalizedCode, { ok: true }>;
  /**
   * Ends the program's reading turn: call it once the engine has compiled the program. Harmless
   * to call twice; called anyway when `run` settles.
   */
  endTurn: () => void;
}

const noTurn = (): void => undefined;

/**
 * The start every executor's pass shares: the pass's limits and console, the code's size, a
 * turn to read a large program (reading-gate.ts: the process reads few at once, whatever the
 * threads or the engine), normalizing the code on this thread (which counts against the pass's
 * time) unless its host read it ahead (`PassRequest.readAhead`), then `run`. A program that
 * cannot be read is answered here, as data.
 */
export async function readProgram(
  request: PassRequest,
  defaults: PassDefaults,
  run: (pass: ReadPass) => Promise<PassResult>,
): Promise<PassResult> {
  const limits = {
    timeoutMs: request.timeoutMs ?? defaults.timeoutMs,
    memoryMb: request.memoryMb ?? defaults.memoryMb,
  };
  const logs = new LogCollector(defaults.maxLogLines, defaults.maxLogLineChars, defaults.maxLogChars);
  // Parsing runs on this thread, before any sandbox: it counts against the pass's time.
  const startedAt = request.startedAt ?? Date.now();
  request.started?.(startedAt);
  const deadline = startedAt + limits.timeoutMs;
  if (request.code.length > MAX_CODE_CHARS) {
    return failed(
      "SANDBOX_ERROR",
      `the code is ${request.code.length} characters, over the ${MAX_CODE_CHARS} limit`,
      logs,
    );
  }
  // Most programs are small: they neither wait nor pay an await for the gate.
  const endTurn =
    request.code.length > LARGE_PROGRAM_CHARS ? await takeReadingTurn(request.code.length, deadline) : noTurn;
  if (!endTurn)
    return failed(
      "TIMEOUT",
      `waiting to read the program (other large programs were being read) took longer than the ${limits.timeoutMs} ms limit`,
      logs,
    );
  try {
    const normalized = request.readAhead ?? normalizeCode(request.code);
    if (!normalized.ok) {
      return failed(
        "SYNTAX_ERROR",
        `SyntaxError: ${normalized.message} (line ${normalized.line}, column ${normalized.column})`,
        logs,
      );
    }
    if (Date.now() >= deadline)
      return failed("TIMEOUT", `reading the program took longer than the ${limits.timeoutMs} ms limit`, logs);
    return await run({ limits, deadline, logs, normalized, endTurn });
  } finally {
    endTurn();
  }
}
