import ivm from "isolated-vm";
import { PRELUDE_SOURCE } from "../prelude/prelude.js";

/** A fresh isolate with its context and the prelude evaluated: no execution has touched it. */
export interface PreparedIsolate {
  isolate: ivm.Isolate;
  context: ivm.Context;
  /** The prelude compiled in this isolate: a warm isolate runs it again in each new context. */
  prelude: ivm.Script;
  /** The prelude's `setup(submit, log, randomBytes, finish, configText)`, to be called once by the pass. */
  setup: ivm.Reference<(...args: unknown[]) => unknown>;
}

/**
 * Creates an isolate with a `memoryMb` heap limit, a context, and the prelude evaluated in it.
 * The isolate is in `running` from the start, so `close()` disposes it whatever happens next.
 */
export async function prepareIsolate(memoryMb: number, running: Set<ivm.Isolate>): Promise<PreparedIsolate> {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  running.add(isolate);
  try {
    const prelude = await compilePrelude(isolate);
    return { isolate, prelude, ...(await prepareContext(isolate, prelude)) };
  } catch (error) {
    disposeIsolate(isolate);
    running.delete(isolate);
    throw error;
  }
}

/**
 * A new context in `isolate` with the prelude (compiled once per isolate) evaluated in it: its own
 * global object and its own built-ins, sharing nothing with any other context of the isolate.
 */
export async function prepareContext(
  isolate: ivm.Isolate,
  prelude: ivm.Script,
): Promise<Pick<PreparedIsolate, "context" | "setup">> {
  const context = await isolate.createContext();
  try {
    const setup = (await prelude.run(context, { reference: true })) as ivm.Reference<(...args: unknown[]) => unknown>;
    return { context, setup };
  } catch (error) {
    context.release();
    throw error;
  }
}

/** Disposes an isolate unless it already is (a second dispose throws). */
export function disposeIsolate(isolate: ivm.Isolate): void {
  if (!isolate.isDisposed) {
    try {
      isolate.dispose();
    } catch {
      // Already gone.
    }
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

export async function compilePrelude(isolate: ivm.Isolate): Promise<ivm.Script> {
  const filename = "codemode-prelude.js";
  const cachedData = preludeCache;
  if (cachedData === null) return isolate.compileScript(PRELUDE_SOURCE, { filename });
  if (cachedData === undefined) {
    const script = (await isolate.compileScript(PRELUDE_SOURCE, {
      filename,
      produceCachedData: true,
    })) as CompiledWithCache;
    if (preludeCache === undefined && script.cachedData) preludeCache = script.cachedData;
    return script;
  }
  const script = (await isolate.compileScript(PRELUDE_SOURCE, { filename, cachedData })) as CompiledWithCache;
  if (script.cachedDataRejected === true) preludeCache = null;
  return script;
}
