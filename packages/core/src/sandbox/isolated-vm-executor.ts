import { randomBytes } from "node:crypto";
import ivm from "isolated-vm";
import type { Executor, HostReply, PassRequest, PassResult, SandboxFailureCode, SandboxRequest } from "./executor.js";
import { normalizeCode } from "./normalize-code.js";
import { PRELUDE_SOURCE } from "./prelude.js";
import { DELIVER_ERROR, DELIVER_VALUE, RESULT_RETURNED, RESULT_THREW, TIMER_SERVICE, type SandboxConfig } from "./sandbox-setup.js";

export interface IsolatedVmExecutorOptions {
  /** Wall-clock limit of one pass, including time spent awaiting the host. Default 60 000 ms. */
  timeoutMs?: number;
  /** Heap limit of one pass's isolate. Default 128 MB. */
  memoryMb?: number;
  /** Console output kept per pass. Default 1 000 lines of at most 10 000 characters. */
  maxLogLines?: number;
  maxLogLineChars?: number;
  /**
   * Isolates kept ready ahead of need (context created, prelude compiled and run), so a pass
   * skips that work. Each serves exactly one pass and is disposed after it: nothing is ever
   * shared between passes or executions. Default 0.
   */
  prewarm?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MEMORY_MB = 128;
/** Largest request text the sandbox may send; durable-value limits are checked by the runtime. */
const MAX_REQUEST_CHARS = 64 * 1024 * 1024;

/**
 * Runs each pass in a fresh isolated-vm isolate: nothing survives from one pass to the next.
 *
 * @example
 * const executor = createIsolatedVmExecutor({ timeoutMs: 5_000 });
 * const result = await executor.runPass({
 *   code: "async () => (await math.add({ a: 1, b: 2 })).sum",
 *   connectors: { math: ["add"] },
 *   onRequest: async (request) => ({ kind: "value", value: '{"sum":3}' }),
 * });
 */
/** The isolated-vm executor; `warm()` resolves once the prewarmed isolates are ready. */
export interface IsolatedVmExecutor extends Executor {
  warm(): Promise<void>;
}

export function createIsolatedVmExecutor(options: IsolatedVmExecutorOptions = {}): IsolatedVmExecutor {
  const defaults = {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    memoryMb: options.memoryMb ?? DEFAULT_MEMORY_MB,
    maxLogLines: options.maxLogLines ?? 1_000,
    maxLogLineChars: options.maxLogLineChars ?? 10_000,
  };
  const running = new Set<ivm.Isolate>();
  const prewarm = Math.max(0, Math.floor(options.prewarm ?? 0));
  const pool: Array<Promise<PreparedIsolate | null>> = [];
  let closed = false;
  const refill = () => {
    while (!closed && pool.length < prewarm) {
      pool.push(
        prepareIsolate(defaults.memoryMb, running).catch(() => null),
      );
    }
  };
  const take = async (memoryMb: number): Promise<PreparedIsolate> => {
    if (memoryMb === defaults.memoryMb && pool.length > 0) {
      const ready = pool.shift()!;
      const prepared = await ready;
      if (prepared && !prepared.isolate.isDisposed) return prepared;
    }
    return prepareIsolate(memoryMb, running);
  };
  refill();
  return {
    async runPass(request) {
      try {
        return await runPass(request, defaults, running, take);
      } finally {
        // Creating an isolate costs this thread over a millisecond: prepare the next one once
        // this pass has answered, not while it runs.
        if (pool.length < prewarm) setImmediate(refill);
      }
    },
    async warm() {
      await Promise.all(pool);
    },
    async close() {
      closed = true;
      const pending = pool.splice(0);
      for (const isolate of running) disposeIsolate(isolate);
      running.clear();
      for (const prepared of await Promise.all(pending)) if (prepared) disposeIsolate(prepared.isolate);
    },
  };
}

/** A fresh isolate with its context and the prelude evaluated: no execution has touched it. */
interface PreparedIsolate {
  isolate: ivm.Isolate;
  context: ivm.Context;
  setup: ivm.Reference<(...args: unknown[]) => unknown>;
}

async function prepareIsolate(memoryMb: number, running: Set<ivm.Isolate>): Promise<PreparedIsolate> {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  running.add(isolate);
  try {
    const context = await isolate.createContext();
    const setup = (await (await compilePrelude(isolate)).run(context, { reference: true })) as ivm.Reference<(...args: unknown[]) => unknown>;
    return { isolate, context, setup };
  } catch (error) {
    disposeIsolate(isolate);
    running.delete(isolate);
    throw error;
  }
}

interface PassLimits {
  timeoutMs: number;
  memoryMb: number;
  maxLogLines: number;
  maxLogLineChars: number;
}

async function runPass(
  request: PassRequest,
  defaults: PassLimits,
  running: Set<ivm.Isolate>,
  take: (memoryMb: number) => Promise<PreparedIsolate>,
): Promise<PassResult> {
  const timeoutMs = request.timeoutMs ?? defaults.timeoutMs;
  const memoryMb = request.memoryMb ?? defaults.memoryMb;
  const logs = new LogCollector(defaults.maxLogLines, defaults.maxLogLineChars);

  const normalized = normalizeCode(request.code);
  if (!normalized.ok) {
    return failed("SYNTAX_ERROR", `SyntaxError: ${normalized.message} (line ${normalized.line}, column ${normalized.column})`, logs);
  }

  const deadline = Date.now() + timeoutMs;
  let prepared: PreparedIsolate;
  try {
    prepared = await take(memoryMb);
  } catch (error) {
    return failed("SANDBOX_ERROR", `the sandbox could not be created: ${errorMessage(error)}`, logs);
  }
  const { isolate, context, setup } = prepared;
  const pass = new PassState(isolate, request, deadline, logs, { timeoutMs, memoryMb });
  const watchdog = setTimeout(() => pass.timeOut(), Math.max(1, deadline - Date.now()));
  try {
    const config: SandboxConfig = {
      connectors: Object.fromEntries(Object.entries(request.connectors).map(([name, methods]) => [name, [...methods]])),
      services: [...(request.services ?? [])],
      replay: [...(request.replay ?? [])],
      deterministic: request.deterministic ? { seed: request.deterministic.seed, clockMs: request.deterministic.clockMs } : null,
      allowNetwork: request.allowNetwork === true,
    };
    pass.deliver = (await setup.apply(
      undefined,
      [pass.submitCallback(), pass.logCallback(), new ivm.Callback(randomBase64), JSON.stringify(config)],
      { result: { reference: true }, timeout: timeoutMs },
    )) as ivm.Reference<(id: number, kind: number, text: string) => void>;
    setup.release();

    let script: ivm.Script;
    try {
      // `input` is undefined for a program; `codemode.run` gives a snippet's body its input.
      script = await isolate.compileScript(`__codemode_start(async (input) => {\n${normalized.body}\n})`, {
        filename: "codemode.js",
        lineOffset: normalized.lineOffset - 1,
      });
    } catch (error) {
      if (pass.ended) throw error;
      return failed("SYNTAX_ERROR", errorMessage(error), logs);
    }
    const returned = script.run(context, { promise: true, timeout: Math.max(1, deadline - Date.now()) }) as Promise<string>;
    const first = await Promise.race([returned.then((text) => ({ text })), pass.halted.then(() => null)]);
    returned.catch(() => undefined);
    if (first === null) return await pass.finish({ status: "halted", logs: logs.lines });
    return await pass.finish(interpretResult(first.text, logs));
  } catch (error) {
    await pass.settleDeliveries();
    return await pass.finish(pass.classifyFailure(error));
  } finally {
    clearTimeout(watchdog);
    pass.endNow();
    // Disposing takes a few hundred microseconds of this thread: answer first, dispose right
    // after. Nothing can reach the isolate meanwhile (deliveries have ended), and close()
    // disposes whatever is still in `running`.
    setImmediate(() => {
      disposeIsolate(isolate);
      running.delete(isolate);
    });
  }
}

/**
 * V8 code cache of the prelude. The first pass of the process produces it while compiling our own
 * constant PRELUDE_SOURCE; later passes hand it to V8, which then skips most of the prelude's
 * parse and compile in each fresh isolate. `null` once V8 rejected it: compile without a cache.
 * Cached data only ever comes from this function, never from callers (CVE-2022-39266).
 */
let preludeCache: ivm.ExternalCopy<ArrayBuffer> | null | undefined;

type CompiledWithCache = ivm.Script & { cachedData?: ivm.ExternalCopy<ArrayBuffer>; cachedDataRejected?: boolean };

async function compilePrelude(isolate: ivm.Isolate): Promise<ivm.Script> {
  const filename = "codemode-prelude.js";
  const cachedData = preludeCache;
  if (cachedData === null) return isolate.compileScript(PRELUDE_SOURCE, { filename });
  if (cachedData === undefined) {
    const script = (await isolate.compileScript(PRELUDE_SOURCE, { filename, produceCachedData: true })) as CompiledWithCache;
    if (preludeCache === undefined && script.cachedData) preludeCache = script.cachedData;
    return script;
  }
  const script = (await isolate.compileScript(PRELUDE_SOURCE, { filename, cachedData })) as CompiledWithCache;
  if (script.cachedDataRejected === true) preludeCache = null;
  return script;
}

function interpretResult(text: string, logs: LogCollector): PassResult {
  if (typeof text !== "string" || text.length === 0) return failed("SANDBOX_ERROR", "the program ended without a result", logs);
  const kind = text[0];
  const rest = text.slice(1);
  if (kind === RESULT_RETURNED) return { status: "returned", value: rest, logs: logs.lines };
  if (kind === RESULT_THREW) {
    try {
      const thrown = JSON.parse(rest) as { message?: unknown; line?: unknown; column?: unknown };
      const message = typeof thrown.message === "string" ? thrown.message : "the program threw";
      const where = typeof thrown.line === "number" && typeof thrown.column === "number" ? ` (line ${thrown.line}, column ${thrown.column})` : "";
      return failed("SANDBOX_ERROR", message + where, logs);
    } catch {
      return failed("SANDBOX_ERROR", "the program threw", logs);
    }
  }
  return failed("NOT_SERIALIZABLE", `the result could not be returned: ${rest}`, logs);
}

function failed(code: SandboxFailureCode, error: string, logs: LogCollector): PassResult {
  return { status: "failed", code, error, logs: logs.lines };
}

/** Everything one pass tracks on the host: requests in flight, halting, the watchdog. */
class PassState {
  deliver: ivm.Reference<(id: number, kind: number, text: string) => void> | undefined;
  ended = false;
  private haltReplied = false;
  private timedOut = false;
  /** The isolate died of its heap limit while running code on a delivery (the program only sees "abandoned"). */
  private outOfMemory = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly deliveries = new Set<Promise<void>>();
  private resolveHalted!: () => void;
  readonly halted = new Promise<void>((resolve) => {
    this.resolveHalted = resolve;
  });

  constructor(
    private readonly isolate: ivm.Isolate,
    private readonly request: PassRequest,
    private readonly deadline: number,
    private readonly logs: LogCollector,
    /** The limits in force for this pass (request or executor defaults), for messages. */
    private readonly limits: { timeoutMs: number; memoryMb: number },
  ) {}

  submitCallback(): ivm.Callback {
    return new ivm.Callback((id: unknown, text: unknown) => {
      if (this.ended || this.haltReplied || typeof id !== "number" || typeof text !== "string") return;
      const parsed = parseRequest(text);
      if (!parsed.ok) {
        this.reply(id, { kind: "error", message: parsed.message });
        return;
      }
      if (parsed.request.type === "service" && parsed.request.name === TIMER_SERVICE) {
        this.startTimer(id, parsed.request.args);
        return;
      }
      let replied: Promise<HostReply>;
      try {
        replied = this.request.onRequest(parsed.request);
      } catch (error) {
        replied = Promise.resolve({ kind: "error", message: errorMessage(error) });
      }
      const settled = replied.then(
        (reply) => this.reply(id, reply),
        (error: unknown) => this.reply(id, { kind: "error", message: errorMessage(error) }),
      );
      this.inFlight.add(settled);
      void settled.finally(() => this.inFlight.delete(settled));
    });
  }

  logCallback(): ivm.Callback {
    return new ivm.Callback((level: unknown, text: unknown) => {
      if (typeof level === "string" && typeof text === "string") this.logs.add(level, text);
    });
  }

  private startTimer(id: number, argsText: string): void {
    const delay = Math.min(Math.max(0, Number(argsText) || 0), Math.max(0, this.deadline - Date.now()));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.reply(id, { kind: "value", value: "" });
    }, delay);
    this.timers.add(timer);
  }

  private reply(id: number, reply: HostReply): void {
    if (reply.kind === "halt") {
      this.haltReplied = true;
      this.resolveHalted();
      return;
    }
    if (this.ended || this.haltReplied || !this.deliver || this.isolate.isDisposed) return;
    const kind = reply.kind === "value" ? DELIVER_VALUE : DELIVER_ERROR;
    const text = reply.kind === "value" ? reply.value : reply.message;
    const delivered = this.deliver
      .apply(undefined, [id, kind, text], { timeout: Math.max(1, this.deadline - Date.now()) })
      .then(
        () => undefined,
        (error: unknown) => {
          // Code running on delivery looped past the deadline, ran out of memory, or the isolate is gone.
          const message = errorMessage(error);
          if (/timed out/i.test(message)) this.timeOut();
          else if (/memory limit/i.test(message)) this.outOfMemory = true;
        },
      );
    this.deliveries.add(delivered);
    void delivered.finally(() => this.deliveries.delete(delivered));
  }

  /** Lets deliveries report how they ended: the program's own promise may say only "abandoned". */
  async settleDeliveries(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
  }

  timeOut(): void {
    if (this.ended) return;
    this.timedOut = true;
    disposeIsolate(this.isolate);
  }

  /** After the program settled or halted: let started host work finish (R-RP-7), then report. */
  async finish(result: PassResult): Promise<PassResult> {
    this.stopTimers();
    const remaining = this.deadline - Date.now();
    if (this.inFlight.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = await Promise.race([
        Promise.allSettled([...this.inFlight]).then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), Math.max(0, remaining));
        }),
      ]);
      clearTimeout(timer);
      if (expired) {
        return failed("TIMEOUT", `calls the program started were still running when the ${this.timeoutMsText()} limit was reached`, this.logs);
      }
    }
    // A halt (pause, divergence) decides the pass even if the program went on and returned.
    const hitLimit = result.status === "failed" && (result.code === "TIMEOUT" || result.code === "MEMORY_LIMIT");
    return this.haltReplied && !hitLimit ? { status: "halted", logs: this.logs.lines } : result;
  }

  classifyFailure(error: unknown): PassResult {
    const message = errorMessage(error);
    if (this.timedOut || /timed out/i.test(message)) {
      return failed("TIMEOUT", `the program ran longer than the ${this.timeoutMsText()} limit`, this.logs);
    }
    if (this.outOfMemory || /memory limit/i.test(message)) {
      return failed("MEMORY_LIMIT", `the program used more memory than the ${this.limits.memoryMb} MB limit`, this.logs);
    }
    if (this.haltReplied) return { status: "halted", logs: this.logs.lines };
    return failed("SANDBOX_ERROR", message, this.logs);
  }

  endNow(): void {
    this.ended = true;
    this.stopTimers();
    this.deliver?.release();
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private timeoutMsText(): string {
    return `${this.limits.timeoutMs} ms`;
  }
}

/** Checks a request text from the sandbox: the sandbox is hostile, so nothing is assumed. */
function parseRequest(text: string): { ok: true; request: SandboxRequest } | { ok: false; message: string } {
  if (text.length > MAX_REQUEST_CHARS) return { ok: false, message: "the request is too large" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: "malformed request" };
  }
  if (typeof value !== "object" || value === null) return { ok: false, message: "malformed request" };
  const record = value as Record<string, unknown>;
  const isSeq = (seq: unknown): seq is number => typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0;
  switch (record.type) {
    case "call":
      if (isSeq(record.seq) && typeof record.connector === "string" && typeof record.method === "string" && typeof record.args === "string") {
        return { ok: true, request: { type: "call", seq: record.seq, connector: record.connector, method: record.method, args: record.args } };
      }
      break;
    case "step":
      if (isSeq(record.seq) && isSeq(record.seqAfter) && typeof record.name === "string") {
        if (typeof record.value === "string" && record.error === undefined) {
          return { ok: true, request: { type: "step", seq: record.seq, name: record.name, seqAfter: record.seqAfter, value: record.value } };
        }
        if (typeof record.error === "string" && record.value === undefined) {
          return { ok: true, request: { type: "step", seq: record.seq, name: record.name, seqAfter: record.seqAfter, error: record.error } };
        }
      }
      break;
    case "service":
      if (typeof record.name === "string" && typeof record.args === "string" && (record.seq === undefined || isSeq(record.seq))) {
        const request: SandboxRequest = { type: "service", name: record.name, args: record.args };
        if (record.seq !== undefined) request.seq = record.seq;
        return { ok: true, request };
      }
      break;
    case "invalid":
      if (typeof record.message === "string" && (record.seq === undefined || isSeq(record.seq))) {
        const request: SandboxRequest = { type: "invalid", message: record.message };
        if (record.seq !== undefined) request.seq = record.seq;
        return { ok: true, request };
      }
      break;
  }
  return { ok: false, message: "malformed request" };
}

class LogCollector {
  readonly lines: string[] = [];
  private dropped = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxLineChars: number,
  ) {}

  add(level: string, text: string): void {
    if (this.lines.length >= this.maxLines) {
      this.dropped++;
      if (this.dropped === 1) this.lines.push(`[logs truncated: more than ${this.maxLines} lines]`);
      return;
    }
    const prefix = level === "warn" ? "[warn] " : level === "error" ? "[error] " : "";
    const line = text.length > this.maxLineChars ? `${text.slice(0, this.maxLineChars)}… [${text.length - this.maxLineChars} more characters]` : text;
    this.lines.push(prefix + line);
  }
}

function randomBase64(count: unknown): string {
  const size = typeof count === "number" && count > 0 && count <= 65_536 ? Math.floor(count) : 0;
  return randomBytes(size).toString("base64");
}

function disposeIsolate(isolate: ivm.Isolate): void {
  if (!isolate.isDisposed) {
    try {
      isolate.dispose();
    } catch {
      // Already gone.
    }
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

