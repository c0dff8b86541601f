import type { Connector, ToolDefinition } from "../../connectors/define-connector.js";
import type { ArgsValidator } from "../../connectors/validate-args.js";
import { errorMessage } from "../../error-message.js";
import { clipMessage } from "../../log/durable-value.js";
import type { ExecutionStore } from "../../log/execution-store.js";
import type { ExecutionHead, StoredEntry, StoreWriter } from "../../log/interface.js";
import { CodemodeError, type Divergence, type ErrorCode } from "../../outcome.js";
import type { HostReply } from "../../sandbox/executor.js";
import type { ApprovalPolicy } from "../approvals/index.js";
import { GrantBook } from "./grant-book.js";
import { LogBudget, type LogLimits } from "./log-budget.js";
import { PassRecorder } from "./recorder.js";

/** What a pass needs of its execution's lease (an `ExecutionLease`). */
export interface PassLease {
  /** Why the lease is lost, or undefined while held. */
  readonly lost: string | undefined;
  /** Surely held without asking the store (its validity time has not run out). */
  readonly fresh: boolean;
  /** Asks the store when not fresh; false once the lease is lost. */
  check(): Promise<boolean>;
  /** The error that says the execution was taken over. */
  takenOver(): CodemodeError;
}

/** The policy of a runtime, as a pass consults it (R-AP-10). */
export interface PassApprovals {
  policy: ApprovalPolicy | undefined;
  /** How long the policy may take for one call before it counts as "ask". */
  timeoutMs: number;
  runtime: string;
  warn(message: string): void;
}

/** What one pass works on: its execution, the store and lease it writes through, and the tools it may call. */
export interface PassStateOptions {
  store: ExecutionStore;
  /** Mutated: seqLimit grows as new calls are recorded. */
  head: ExecutionHead;
  /** Mutated: every entry this pass records lands here too. */
  log: Map<number, StoredEntry>;
  /** The execution's lease, held by this pass: checked before every effect, and every write goes through it. */
  lease: PassLease & StoreWriter;
  /** Configured connectors plus the built-in ones (fetch when the network is allowed). */
  tools: (connector: string, method: string) => ToolDefinition | undefined;
  validators: ReadonlyMap<string, ArgsValidator>;
  /** Result checks by "connector.method" (R-CN-OA). Default none. */
  resultValidators?: ReadonlyMap<string, ArgsValidator>;
  /** The execution's write quota (limits.maxLogBytes, limits.maxLogEntries). */
  limits: LogLimits;
  /** The runtime's approval policy and where its failures are reported (R-AP-10). */
  approvals: PassApprovals;
  /** Aborted when the run is cancelled; handed to each tool call (`ToolContext.signal`). */
  signal?: AbortSignal;
  /** When the pass's time limit runs out (epoch ms); handed to each tool call (`ToolContext.deadline`). */
  deadline?: number;
}

/** Why a pass stopped early: an error with its code. A pause is not a stop: the program goes on (R-AP-8). */
export type Stop = { kind: "error"; code: ErrorCode; message: string; divergence?: Divergence };

export const HALT: HostReply = { kind: "halt" };
const HALT_PROMISE: Promise<HostReply> = Promise.resolve(HALT);

/**
 * What the request handlers of one pass share: the execution, its log, the recorder and the
 * write quota it owns, and the first reason to stop. The stop is taken synchronously when a
 * request arrives, so a call the program issues after it is never run (R-RP-6).
 */
export class PassState {
  stop: Stop | undefined;
  /** Seqs of the calls that wait for a person, in the order they paused (R-AP-8). */
  readonly pending: number[] = [];
  /**
   * Set while a call's pause waits on an asynchronous argument check: requests issued after it
   * wait for it (see run-pass.ts), so that none of them runs if it pauses (R-RP-6).
   */
  held: Promise<void> | undefined;
  private readonly usedSeqs = new Set<number>();

  readonly head: ExecutionHead;
  readonly log: Map<number, StoredEntry>;
  readonly tools: PassStateOptions["tools"];
  readonly validators: ReadonlyMap<string, ArgsValidator>;
  readonly resultValidators: ReadonlyMap<string, ArgsValidator>;
  /** The execution's lease, held by this pass. */
  readonly lease: PassLease;
  /** The execution's write quota (limits.maxLogBytes, limits.maxLogEntries). */
  readonly budget: LogBudget;
  /** Writes this pass's entries in order; a deferred write that fails stops the pass. */
  readonly recorder: PassRecorder;
  /** Grants in force (R-AP-9), read from the log when a call first needs one. */
  readonly grants: GrantBook;
  readonly approvals: PassApprovals;
  readonly signal: AbortSignal | undefined;
  /** When the pass's time limit runs out: set again by `started` when the sandbox pass starts. */
  deadline: number | undefined;

  constructor(options: PassStateOptions) {
    this.signal = options.signal;
    this.deadline = options.deadline;
    this.head = options.head;
    this.log = options.log;
    this.tools = options.tools;
    this.validators = options.validators;
    this.resultValidators = options.resultValidators ?? new Map();
    this.lease = options.lease;
    this.budget = new LogBudget(options.head, options.log, options.limits);
    this.grants = new GrantBook(options.log);
    this.approvals = options.approvals;
    this.recorder = new PassRecorder(
      options.store,
      options.head,
      options.log,
      options.lease,
      (error) => void this.failWith(error),
      this.budget,
    );
  }

  /** Ends the pass now; the request never settles in the sandbox. Its message is what the record and the model get. */
  halt(reason: Stop): Promise<HostReply> {
    this.stop ??= { ...reason, message: clipMessage(reason.message) };
    return HALT_PROMISE;
  }

  /** Halts with the error's own code, or SANDBOX_ERROR for anything that is not ours. */
  failWith(error: unknown): Promise<HostReply> {
    if (CodemodeError.isInstance(error)) return this.halt({ kind: "error", code: error.code, message: error.message });
    return this.halt({ kind: "error", code: "SANDBOX_ERROR", message: errorMessage(error) });
  }

  /** Holds the requests that come next until the returned function is called. */
  holdRequests(): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.held = held;
    return () => {
      if (this.held === held) this.held = undefined;
      release();
    };
  }

  /** Halts when the lease is lost: a host taken for gone must not cause one more effect. */
  haltIfLeaseLost(): Promise<HostReply> | undefined {
    return this.lease.lost === undefined
      ? undefined
      : this.halt({ kind: "error", code: "BUSY", message: this.lease.takenOver().message });
  }

  /**
   * Before an effect (a request, a call's write-ahead, a tool): undefined at once while the lease
   * is surely held (its validity time has not run out); otherwise the store is asked, and the
   * pass halts if the lease was lost meanwhile (a process that stalled past its lease).
   */
  checkLease(): Promise<HostReply | undefined> | undefined {
    const lost = this.haltIfLeaseLost();
    if (lost) return lost;
    if (this.lease.fresh) return undefined;
    return this.lease.check().then(
      (held) => (held ? undefined : this.haltIfLeaseLost()),
      (error: unknown) => this.failWith(error),
    );
  }

  /** True when a store write failed: run nothing that cannot be recorded. */
  get storageFailed(): boolean {
    return this.stop?.code === "STORAGE_ERROR";
  }

  /** Each seq serves one call or step per pass; a second use is a tampered sandbox. */
  claimSeq(seq: number): Promise<HostReply> | undefined {
    if (!this.usedSeqs.has(seq)) {
      this.usedSeqs.add(seq);
      return undefined;
    }
    return this.halt({ kind: "error", code: "SANDBOX_ERROR", message: `seq ${seq} was used twice in one pass` });
  }
}

/** Looks a tool up among configured connectors and built-in tools, own properties only. */
export function toolLookup(
  connectors: ReadonlyMap<string, Connector>,
  builtIn: ReadonlyMap<string, ToolDefinition>,
): (connector: string, method: string) => ToolDefinition | undefined {
  return (connectorName, method) => {
    if (connectorName === "codemode") return builtIn.get(method);
    const connector = connectors.get(connectorName);
    if (!connector || !Object.hasOwn(connector.tools, method)) return undefined;
    return connector.tools[method] as ToolDefinition;
  };
}
