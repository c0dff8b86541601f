import { CodemodeError, type ApprovalDecision, type ErrorCode, type ExecutionStatus, type LogEntryState } from "../outcome.js";
import { storeKeys, type StoreKeys } from "./keys.js";

/**
 * The subset of a Keyv instance (≥ 5.6) the runtime uses. Any Keyv adapter fits; `getMany`
 * makes a pass's log load one round trip (R-ST-2).
 */
export interface KeyvLike {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown, ttl?: number): Promise<unknown>;
  delete(key: string | string[]): Promise<unknown>;
  getMany?(keys: string[]): Promise<unknown[]>;
  setMany?(entries: Array<{ key: string; value: unknown }>): Promise<unknown>;
  deleteMany?(keys: string[]): Promise<unknown>;
  throwOnErrors?: boolean;
  on?(event: "error", listener: (error: unknown) => void): unknown;
  /** Keyv's adapter, when this is a Keyv instance. */
  store?: unknown;
}

/** The small record of an execution that changes with its status. Code and log live apart. */
export interface ExecutionHead {
  id: string;
  status: ExecutionStatus;
  createdAt: number;
  updatedAt: number;
  connectors: string[];
  /** Log entries exist only at seqs below this; raised in blocks so it is rarely rewritten. */
  seqLimit: number;
  pendingSeq?: number;
  /** Replay-stable clock and randomness (R-SB-6), kept so every pass sees the same values. */
  deterministic: boolean;
  seed: string;
  clockMs: number;
  error?: string;
  errorCode?: ErrorCode;
  passes: number;
}

/** A log entry as stored: arguments and results stay in wire text of the value codec. */
export interface StoredEntry {
  seq: number;
  connector: string;
  method: string;
  /** Wire text ("" for no argument). */
  args: string;
  /** Wire text of the result; absent for ephemeral entries and failures. */
  result?: string;
  error?: string;
  requiresApproval: boolean;
  ephemeral?: boolean;
  state: LogEntryState;
  /** Steps: the first seq after the step's fn settled. */
  seqAfter?: number;
  decision?: ApprovalDecision;
  /** Rollback progress and failures (R-RB-4). */
  revertError?: string;
  startedAt: number;
  endedAt?: number;
}

export interface StoredResult {
  /** Wire text of the final result, or absent when it could not be kept. */
  result?: string;
  /** Why the result is not in the record (R-DV-2). */
  omitted?: string;
  logs?: string[];
}

const SEQ_BLOCK = 32;

/**
 * Executions and their log entries over a Keyv store. Recording a call writes that one entry
 * (R-ST-1). Every store failure becomes a STORAGE_ERROR: an outage must never look like a
 * missing key. Listings live apart, in an `ExecutionIndex`.
 */
export class ExecutionStore {
  readonly keys: StoreKeys;

  constructor(
    private readonly keyv: KeyvLike,
    runtimeName: string,
  ) {
    this.keys = storeKeys(runtimeName);
    // Keyv 5 swallows adapter errors unless told otherwise; a failed read would look like "not found".
    keyv.throwOnErrors = true;
    // Some adapters (KeyvRedis) swallow errors behind a switch of their own, returning "missing".
    const adapter = adapterOf(keyv);
    if (adapter && "throwOnErrors" in adapter) adapter.throwOnErrors = true;
    keyv.on?.("error", () => {
      // Errors are thrown to the caller (throwOnErrors); the listener keeps Keyv 6 from also rejecting unhandled.
    });
  }

  static seqLimitFor(seq: number): number {
    return (Math.floor(seq / SEQ_BLOCK) + 1) * SEQ_BLOCK;
  }

  async createExecution(head: ExecutionHead, code: string): Promise<void> {
    await this.setMany([
      { key: this.keys.code(head.id), value: code },
      { key: this.keys.head(head.id), value: JSON.stringify(head) },
    ]);
  }

  async readHead(executionId: string): Promise<ExecutionHead | undefined> {
    const text = await this.guard("read an execution", () => this.keyv.get(this.keys.head(executionId)));
    return text === undefined || text === null ? undefined : parseJson<ExecutionHead>(text, "execution record");
  }

  async readHeads(executionIds: string[]): Promise<Array<ExecutionHead | undefined>> {
    const texts = await this.getMany(executionIds.map((id) => this.keys.head(id)));
    return texts.map((text) => (text === undefined || text === null ? undefined : parseJson<ExecutionHead>(text, "execution record")));
  }

  /**
   * Writes the head, with the entries and the final result that change with it, in one batch.
   * The result and entries are listed first: a store that applies a batch in order never shows
   * a head whose result is not there yet.
   */
  async writeHead(head: ExecutionHead, extra: { entries?: StoredEntry[]; result?: StoredResult } = {}): Promise<void> {
    const batch: Array<{ key: string; value: string }> = [];
    if (extra.result) batch.push({ key: this.keys.result(head.id), value: JSON.stringify(extra.result) });
    for (const entry of extra.entries ?? []) batch.push({ key: this.keys.entry(head.id, entry.seq), value: JSON.stringify(entry) });
    batch.push({ key: this.keys.head(head.id), value: JSON.stringify(head) });
    if (batch.length === 1) await this.guard("write an execution", () => this.keyv.set(this.keys.head(head.id), JSON.stringify(head)));
    else await this.setMany(batch);
  }

  /** Code and every log entry of an execution, in one batched read (R-ST-2). */
  async readCodeAndLog(head: ExecutionHead): Promise<{ code: string; log: Map<number, StoredEntry> }> {
    const keys = [this.keys.code(head.id)];
    for (let seq = 0; seq < head.seqLimit; seq++) keys.push(this.keys.entry(head.id, seq));
    const values = await this.getMany(keys);
    const code = values[0];
    if (typeof code !== "string") throw new CodemodeError("STORAGE_ERROR", `the code of execution ${head.id} is missing from the store`);
    const log = new Map<number, StoredEntry>();
    for (let index = 1; index < values.length; index++) {
      const text = values[index];
      if (text === undefined || text === null) continue;
      const entry = parseJson<StoredEntry>(text, "log entry");
      log.set(entry.seq, entry);
    }
    return { code, log };
  }

  async readEntries(executionId: string, seqs: number[]): Promise<Array<StoredEntry | undefined>> {
    const texts = await this.getMany(seqs.map((seq) => this.keys.entry(executionId, seq)));
    return texts.map((text) => (text === undefined || text === null ? undefined : parseJson<StoredEntry>(text, "log entry")));
  }

  /** Entries of several executions in one batched read (the pending actions of a page). */
  async readEntriesAt(refs: ReadonlyArray<{ executionId: string; seq: number }>): Promise<Array<StoredEntry | undefined>> {
    const texts = await this.getMany(refs.map((ref) => this.keys.entry(ref.executionId, ref.seq)));
    return texts.map((text) => (text === undefined || text === null ? undefined : parseJson<StoredEntry>(text, "log entry")));
  }

  async writeEntry(executionId: string, entry: StoredEntry): Promise<void> {
    await this.guard("record a call", () => this.keyv.set(this.keys.entry(executionId, entry.seq), JSON.stringify(entry)));
  }

  async readResult(executionId: string): Promise<StoredResult | undefined> {
    const text = await this.guard("read the result", () => this.keyv.get(this.keys.result(executionId)));
    return text === undefined || text === null ? undefined : parseJson<StoredResult>(text, "result record");
  }

  async deleteExecution(head: ExecutionHead): Promise<void> {
    const keys = [this.keys.head(head.id), this.keys.code(head.id), this.keys.result(head.id)];
    for (let seq = 0; seq < head.seqLimit; seq++) keys.push(this.keys.entry(head.id, seq));
    await this.guard("delete an execution", async () => {
      if (this.keyv.deleteMany) await this.keyv.deleteMany(keys);
      else await Promise.all(keys.map((key) => this.keyv.delete(key)));
    });
  }

  async getRaw(key: string): Promise<unknown> {
    return this.guard("read the store", () => this.keyv.get(key));
  }

  async setRaw(key: string, value: string): Promise<void> {
    await this.guard("write the store", () => this.keyv.set(key, value));
  }

  private async getMany(keys: string[]): Promise<unknown[]> {
    if (keys.length === 0) return [];
    return this.guard("read the store", async () => {
      // Over an adapter without getMany, Keyv's getMany reads key by key and turns a failed read
      // into a missing key, even with throwOnErrors: a log entry would vanish and its call run again.
      const adapter = adapterOf(this.keyv);
      const batched = this.keyv.getMany && !(adapter && typeof adapter.getMany !== "function");
      if (batched) return this.keyv.getMany!(keys);
      return Promise.all(keys.map((key) => this.keyv.get(key)));
    });
  }

  private async setMany(entries: Array<{ key: string; value: string }>): Promise<void> {
    await this.guard("write the store", async () => {
      if (this.keyv.setMany) {
        const results = await this.keyv.setMany(entries);
        if (Array.isArray(results) && results.some((ok) => ok === false)) throw new Error("the store refused a write");
        return;
      }
      await Promise.all(entries.map((entry) => this.keyv.set(entry.key, entry.value)));
    });
  }

  private async guard<T>(what: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (CodemodeError.isInstance(error)) throw error;
      throw new CodemodeError("STORAGE_ERROR", `the store failed to ${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/** The adapter under a Keyv instance, if any (a Map has no getMany and never fails). */
function adapterOf(keyv: KeyvLike): { getMany?: unknown; throwOnErrors?: unknown } | undefined {
  const adapter = keyv.store;
  return typeof adapter === "object" && adapter !== null && !(adapter instanceof Map) ? (adapter as { getMany?: unknown; throwOnErrors?: unknown }) : undefined;
}

function parseJson<T>(text: unknown, what: string): T {
  if (typeof text !== "string") throw new CodemodeError("STORAGE_ERROR", `the store returned a ${what} that is not text`);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CodemodeError("STORAGE_ERROR", `the store returned a ${what} that is not valid JSON`);
  }
}
