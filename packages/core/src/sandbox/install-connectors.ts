import type { SandboxBridge } from "./sandbox-bridge.js";
import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { ValueCodec } from "./value-codec.js";

/** A preloaded log entry as the sandbox receives it (the host's `ReplayEntry`, as JSON). */
export interface SandboxReplayEntry {
  kind: string;
  seq: number;
  connector?: string;
  method?: string;
  name?: string;
  args?: string;
  canonicalArgs?: string;
  seqAfter?: number;
  outcome: string;
  text: string;
}

/** The pass's seq counter and preloaded log, shared with `codemode.step` and `fetch`. */
export interface SeqCounter {
  /** Takes the next seq: at the call site, so concurrent calls are numbered in issue order (R-RP-1). */
  take(): number;
  /** The next free seq, not taken. */
  peek(): number;
  /** Moves the counter on to `seq` when it is ahead (a replayed step's `seqAfter`). */
  skipTo(seq: number): void;
  /** The preloaded entry recorded at `seq`, if any. */
  recorded(seq: number): SandboxReplayEntry | undefined;
}

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Installs one frozen global per connector whose methods take a seq and either
 * answer from the preloaded log (same seq, connector, method and canonical arguments: no bridge
 * trip, R-ST-2) or send the call to the host, which decides everything else, divergence included.
 * A program that tampers with what is preloaded can only fool itself: effects happen on the host.
 */
export function installConnectors(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  connectors: Record<string, string[]>,
  replayEntries: SandboxReplayEntry[],
  codec: ValueCodec,
  bridge: SandboxBridge,
): SeqCounter {
  "use strict";
  const { ObjectFreeze, ObjectCreate, ObjectDefineProperty, PromiseResolve, PromiseReject } = intrinsics;
  const { ErrorCtor, TypeErrorCtor } = intrinsics;
  const { send, invalid, decodeText } = bridge;

  // By seq, in an object without a prototype: no built-in (a Map's methods) is called per call,
  // which costs an interpreter (QuickJS) more than a property read, and nothing the program may
  // define on a prototype is found for a seq with no entry.
  const replay: Record<number, SandboxReplayEntry | undefined> = ObjectCreate(null);
  for (let index = 0; index < replayEntries.length; index++) {
    const entry = replayEntries[index]!;
    replay[entry.seq] = entry;
  }
  let nextSeq = 0;

  function callConnector(connector: string, method: string, argumentCount: number, args: unknown): Promise<unknown> {
    if (argumentCount > 1) {
      return PromiseReject(new TypeErrorCtor(`${connector}.${method} takes one argument (an object)`));
    }
    const seq = nextSeq++;
    let argsText: string;
    try {
      argsText = codec.encode(args) ?? "";
    } catch (error) {
      return invalid(seq, error);
    }
    // The check first: the message is only built for a value that is too large.
    if (argsText.length > bridge.maxValueChars) {
      const oversized = bridge.tooLarge(seq, `the argument of ${connector}.${method}`, argsText);
      if (oversized) return oversized;
    }
    const entry = replay[seq];
    if (entry && entry.kind === "call" && entry.connector === connector && entry.method === method) {
      // The same text as recorded is the common case; otherwise compare key-order-insensitive
      // text, computed from the text already encoded so argument getters never run twice.
      let matches = entry.args !== undefined && entry.args === argsText;
      if (!matches) {
        try {
          const canonicalArgs = argsText === "" ? "" : codec.canonical(argsText);
          const recorded =
            entry.canonicalArgs ?? (entry.args === undefined || entry.args === "" ? "" : codec.canonical(entry.args));
          matches = canonicalArgs === recorded;
        } catch (error) {
          return invalid(seq, error);
        }
      }
      if (matches) {
        if (entry.outcome === "value") {
          try {
            return PromiseResolve(decodeText(entry.text));
          } catch (error) {
            return PromiseReject(error);
          }
        }
        return PromiseReject(new ErrorCtor(entry.text));
      }
    }
    return send({ type: "call", seq, connector, method, args: argsText }, true);
  }

  for (const connector in connectors) {
    const methods: Record<string, unknown> = ObjectCreate(null);
    const names = connectors[connector]!;
    for (let index = 0; index < names.length; index++) {
      const method = names[index]!;
      methods[method] = {
        // Extra arguments are seen without `arguments`, which an interpreter (QuickJS) would
        // build on every call.
        [method](args?: unknown, extra?: unknown, more?: unknown) {
          return callConnector(connector, method, more !== undefined ? 3 : extra !== undefined ? 2 : 1, args);
        },
      }[method];
    }
    ObjectDefineProperty(global, connector, {
      value: ObjectFreeze(methods),
      enumerable: true,
      configurable: false,
      writable: false,
    });
  }

  return {
    take: () => nextSeq++,
    peek: () => nextSeq,
    skipTo: (seq) => {
      if (seq > nextSeq) nextSeq = seq;
    },
    recorded: (seq) => replay[seq],
  };
}
