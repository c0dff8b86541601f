/**
 * The executor runs one pass of a program in a sandbox. It is stateless and replaceable: the
 * durable runtime owns every decision (replay, execute, pause, diverge) and answers the
 * sandbox's requests through `onRequest`. Values cross as wire text of the value codec.
 */
import type { NormalizedCode } from "./code/normalize-code.js";

/** What the sandbox asks of the host while a pass runs. Every field was checked by the executor. */
export type SandboxRequest =
  | {
      /** A connector call, numbered where the program issued it. */
      type: "call";
      seq: number;
      connector: string;
      method: string;
      /** Wire text of the single argument; "" when the program passed nothing. */
      args: string;
    }
  | {
      /** `codemode.step(name, fn)` finished running `fn` inside the sandbox; record it. */
      type: "step";
      seq: number;
      name: string;
      /** The next free seq after `fn` settled (calls inside `fn` take seqs too). */
      seqAfter: number;
      /** Wire text of the value `fn` resolved to; absent when it threw. */
      value?: string;
      /** Message of what `fn` threw. */
      error?: string;
    }
  | {
      /** `codemode.search` / `describe` / `run` and `fetch`: host services. */
      type: "service";
      name: string;
      /** A seq when the service is recorded like a step (fetch). */
      seq?: number;
      args: string;
    }
  | {
      /**
       * The sandbox could not encode a value it had to pass, or (with `size`) the value's wire
       * text was longer than `maxValueChars` and was not sent (R-DV-1).
       */
      type: "invalid";
      seq?: number;
      /** Why it could not be encoded; with `size`, what the value was ("the argument of github.get"). */
      message: string;
      /** Characters of the wire text that was not sent. */
      size?: number;
    };

/** The host's answer to one request. */
export type HostReply =
  | { kind: "value"; value: string }
  | { kind: "error"; message: string }
  /** End the pass now: the request never settles in the sandbox (divergence, limits, a store failure). */
  | { kind: "halt" }
  /**
   * The request waits for a person (R-AP-8): it never settles in this pass, but the program goes
   * on. The pass ends, `halted`, once nothing else can happen: every request still open is a
   * waiting one, and no reply, delivery or timer is under way.
   */
  | { kind: "wait" }
  /**
   * A person or the policy denied the call (R-AP-9): it rejects with an error named
   * `ApprovalDenied` that carries `message` and the facts of `denial`.
   */
  | { kind: "denied"; message: string; denial?: DenialFacts };

/** What an `ApprovalDenied` error tells the program besides its message: which call, and who denied it why. */
export interface DenialFacts {
  seq: number;
  /** `connector.method`. */
  call: string;
  /** Wire text of the arguments, as they were shown to the person ("" for none). */
  args: string;
  by?: string;
  reason?: string;
}

/**
 * The text a denial is delivered into the sandbox with: wire text of `{ message, seq, call, args,
 * by, reason }` (the arguments' own wire text set in as it is), which the sandbox's bridge turns
 * into the `ApprovalDenied` error's message and fields. A denial without facts is its message alone.
 */
export function denialDelivery(message: string, denial: DenialFacts | undefined): string {
  if (!denial) return message;
  const fields = [
    `"message":${JSON.stringify(message)}`,
    `"seq":${denial.seq}`,
    `"call":${JSON.stringify(denial.call)}`,
    ...(denial.args !== "" ? [`"args":${denial.args}`] : []),
    ...(denial.by !== undefined ? [`"by":${JSON.stringify(denial.by)}`] : []),
    ...(denial.reason !== undefined ? [`"reason":${JSON.stringify(denial.reason)}`] : []),
  ];
  return `{${fields.join(",")}}`;
}

/** A log entry the sandbox may answer by itself, without a bridge trip (R-ST-2). */
export type ReplayEntry =
  | {
      kind: "call";
      seq: number;
      connector: string;
      method: string;
      /** Wire text of the recorded arguments, as the program sent them ("" for none). */
      args?: string;
      /** `valueCodec.canonical` of the recorded arguments; computed from `args` when absent. */
      canonicalArgs?: string;
      outcome: "value" | "error";
      /** Wire text of the recorded result ("" for undefined) or the recorded error message. */
      text: string;
    }
  | {
      kind: "step";
      seq: number;
      name: string;
      seqAfter: number;
      outcome: "value" | "error";
      text: string;
    };

export interface PassRequest {
  /** The program as the model wrote it, in any accepted form (R-SB-2). */
  code: string;
  /** Connector globals to install: name → method names. */
  connectors: Readonly<Record<string, readonly string[]>>;
  /** Names of `codemode.*` services the host answers (besides `step`, which is built in). */
  services?: readonly string[];
  /**
   * Called synchronously at the moment the sandbox issues a request, in issue order. The host
   * must never let it reject; a rejection is reported to the sandbox as an error.
   */
  onRequest(request: SandboxRequest): Promise<HostReply>;
  /** Recorded calls the sandbox replays by itself. */
  replay?: readonly ReplayEntry[];
  /**
   * Replay-stable clock and randomness (R-SB-6); `false` for the real ones. With `keyed`, `seed`
   * is a secret the sandbox never sees: `Math.random` is seeded from a hash of it, and `crypto`
   * draws from a keyed stream on the host (AES-256-CTR), so that no value the program shows lets
   * anyone recompute the others. Without it, both come from `seed` inside the sandbox (the
   * generator of executions started before keyed seeds, kept so that they replay).
   */
  deterministic?: { seed: string; clockMs: number; keyed?: boolean } | false;
  /** Gives the sandbox a `fetch` global that is answered by the "fetch" service (R-SB-5). */
  allowNetwork?: boolean;
  timeoutMs?: number;
  /**
   * When the pass's time began (epoch ms), when it began before the executor got it: a pass sent
   * to a sandbox process counts from when it was sent, so the process and its parent agree on the
   * deadline. Default: when the executor starts the pass.
   */
  startedAt?: number;
  /**
   * Told the instant the pass's time starts (epoch ms; its deadline is that plus `timeoutMs`), so
   * that the host's own waits for this pass (a tool call's) end with the sandbox's.
   */
  started?: (startedAt: number) => void;
  memoryMb?: number;
  /** Longest wire text of a value sent to be kept (see `SandboxLimits.maxValueChars`); the executor's default when absent. */
  maxValueChars?: number;
  /**
   * Who the pass runs for (a runtime: its name and an id of the instance): an executor that keeps
   * isolates warm between passes only ever gives a pass an isolate that served the same partition.
   */
  partition?: string;
  /**
   * Ends the pass at once when aborted (the run was cancelled): the sandbox is torn down as at
   * the deadline, and the pass answers `failed` with SANDBOX_ERROR and the abort's reason.
   */
  signal?: AbortSignal;
  /**
   * Polled while the program's code runs, by an executor that runs it on its own thread (QuickJS):
   * true ends the pass as an aborted `signal` does. It lets a pass on a sandbox thread be stopped
   * while its program holds that thread in a loop (the thread then reads no message).
   */
  aborted?: () => boolean;
  /**
   * True while nothing else needs the thread that runs the pass (a sandbox process running this
   * pass alone): replies may then be delivered into the sandbox synchronously, the program's next
   * call issued in the same turn, without a hop to the engine's own thread and back. Where it is
   * absent or false, deliveries leave the thread free for other passes.
   */
  ownsThread?: () => boolean;
  /**
   * With `ownsThread`, the program's first run may also happen on that thread (isolated-vm:
   * `runSync` rather than a hop to isolated-vm's thread). Set by a process host when the pass is
   * alone in its process and the next pass has somewhere else to go (another idle process, or a
   * slot to start one in): a program that loops from its start then holds a thread no other pass
   * waits for.
   */
  startInPlace?: boolean;
  /**
   * Run this pass in a sandbox host no other pass shares (a process host starts one for it): the
   * pass is run again after a host it shared ended, and must show whether it was the cause.
   */
  alone?: boolean;
  /**
   * The program as the sandbox host read it before the pass came (`Executor.anticipate`): set by
   * the host's side that read it, and only for a pass whose `code` is the very text it read; the
   * pass then does not read it again.
   */
  readAhead?: NormalizedCode;
}

export type SandboxFailureCode =
  | "SYNTAX_ERROR"
  | "SANDBOX_ERROR"
  | "PROGRAM_ERROR"
  | "TIMEOUT"
  | "MEMORY_LIMIT"
  | "NOT_SERIALIZABLE"
  | "SANDBOX_CRASHED";

/**
 * What is known of a sandbox host that ended while a pass ran in it (a sandbox process that
 * crashed, or was ended for a limit): how it ended, how far the pass had got, and whether the
 * pass should run again because it may not be the one that caused it.
 */
export interface SandboxCrash {
  /** The signal that ended the sandbox process ("SIGKILL", "SIGABRT", …). */
  signal?: string;
  /** Its exit code, when it exited rather than being ended by a signal. */
  exitCode?: number;
  /** The highest seq the pass had asked the host about (calls replayed inside the sandbox are not seen). */
  lastSeq?: number;
  /**
   * Set when the pass shared its sandbox host with other passes and may not be the one that
   * ended it: run it again, `"alone"` in a host of its own (one of several suspects), or
   * `"shared"` anywhere (another pass was found to be the cause).
   */
  retry?: "alone" | "shared";
}

export type PassResult =
  /** The program returned; `value` is wire text ("" for undefined). */
  | { status: "returned"; value: string; logs: string[] }
  /** A host reply halted the pass, or the program could go no further than requests left waiting. */
  | { status: "halted"; logs: string[] }
  | { status: "failed"; code: SandboxFailureCode; error: string; logs: string[]; crash?: SandboxCrash }
  /** The program did not catch a denial it was given (R-AP-9); `error` is its message. */
  | { status: "denied"; error: string; logs: string[] };

/** Runs passes. Implementations hold no per-execution state between passes. */
export interface Executor {
  runPass(request: PassRequest): Promise<PassResult>;
  /**
   * A pass of `code` is about to be asked for (a new execution is being stored, a decided one is
   * about to resume). A host that runs passes elsewhere (a sandbox process or thread) may start
   * reading the program there now, while the runtime does its own work before the pass. A hint:
   * the pass is run the same way whether it came, and nothing waits for it.
   */
  anticipate?(code: string): void;
  /** Releases whatever the executor keeps warm. */
  close(): Promise<void>;
}
