import type { SandboxBridge } from "./sandbox-bridge.js";
import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { ValueCodec } from "./value-codec.js";

/** A preloaded log entry as the sandbox hands it to `codemode.step` and `fetch` (see `SeqCounter.recorded`). */
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

/**
 * A preloaded log entry as it crosses to the sandbox: a tuple, not an object, since parsing the
 * preload is a per-entry cost of every replay and an interpreter (QuickJS) parses arrays about
 * twice as fast as objects. Made by the host's `wireReplay` (sandbox-config.ts).
 * - a call: `[seq, "c", connector, method, args or null, 1 for a value or 0 for an error, text, canonical args or null]`
 * - a step: `[seq, "s", name, seqAfter, 1 or 0, text]`
 */
export type WireReplayEntry =
  | [
      seq: number,
      kind: "c",
      connector: string,
      method: string,
      args: string | null,
      value: 0 | 1,
      text: string,
      canonicalArgs: string | null,
    ]
  | [seq: number, kind: "s", name: string, seqAfter: number, value: 0 | 1, text: string];

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
  replayEntries: WireReplayEntry[],
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
  const replay: Record<number, WireReplayEntry | undefined> = ObjectCreate(null);
  for (let index = 0; index < replayEntries.length; index++) {
    const entry = replayEntries[index]!;
    replay[entry[0]] = entry;
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
    if (entry && entry[1] === "c" && entry[2] === connector && entry[3] === method) {
      // The same text as recorded is the common case; otherwise compare key-order-insensitive
      // text, computed from the text already encoded so argument getters never run twice.
      const recordedArgs = entry[4];
      let matches = recordedArgs !== null && recordedArgs === argsText;
      if (!matches) {
        try {
          const canonicalArgs = argsText === "" ? "" : codec.canonical(argsText);
          const recorded =
            entry[7] ?? (recordedArgs === null || recordedArgs === "" ? "" : codec.canonical(recordedArgs));
          matches = canonicalArgs === recorded;
        } catch (error) {
          return invalid(seq, error);
        }
      }
      if (matches) {
        if (entry[5] === 1) {
          try {
            return PromiseResolve(decodeText(entry[6]));
          } catch (error) {
            return PromiseReject(error);
          }
        }
        return PromiseReject(new ErrorCtor(entry[6]));
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
    recorded: (seq) => {
      const entry = replay[seq];
      if (!entry) return undefined;
      const outcome = entry[1] === "c" ? entry[5] : entry[4];
      const text = entry[1] === "c" ? entry[6] : entry[5];
      const recorded: SandboxReplayEntry = ObjectCreate(null);
      recorded.kind = entry[1] === "c" ? "call" : "step";
      recorded.seq = entry[0];
      recorded.outcome = outcome === 1 ? "value" : "error";
      recorded.text = text;
      if (entry[1] === "s") {
        recorded.name = entry[2];
        recorded.seqAfter = entry[3];
      } else {
        recorded.connector = entry[2];
        recorded.method = entry[3];
      }
      return recorded;
    },
  };
}
