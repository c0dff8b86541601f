import { CodemodeError } from "../outcome.js";
import type { ExecutionHead, KeyvLike, StoredEntry, StoredResult, StoreWriter } from "./interface.js";
import { type StoreKeys, storeKeys } from "./keys.js";
import { type KeyvAccess, keyvAccess } from "./keyv-access.js";

const SEQ_BLOCK = 32;
/** The longest cancel request read from the store, and the longest `by` and `reason` kept of it. */
const MAX_CANCEL_CHARS = 10_000;
const MAX_CANCEL_TEXT = 1_000;

/** Who asked to cancel a run, when and why (`runtime.cancel`). */
export interface CancelRequest {
  at: number;
  by?: string;
  reason?: string;
}

/**
 * Executions and their log entries over a Keyv store. Recording a call writes that one entry
 * (R-ST-1). Every store failure becomes a STORAGE_ERROR: an outage must never look like a
 * missing key. Listings live apart, in an `ExecutionIndex`.
 */
export class ExecutionStore {
  readonly keys: StoreKeys;
  private readonly access: KeyvAccess;

  constructor(
    private readonly keyv: KeyvLike,
    runtimeName: string,
  ) {
    this.keys = storeKeys(runtimeName);
    this.access = keyvAccess(keyv);
  }

  static seqLimitFor(seq: number): number {
    return (Math.floor(seq / SEQ_BLOCK) + 1) * SEQ_BLOCK;
  }

  /** A new execution: its code, the entries it starts with (a fork's prefix), then its head, in one batch. */
  async createExecution(head: ExecutionHead, code: string, entries: readonly StoredEntry[] = []): Promise<void> {
    await this.setMany([
      { key: this.keys.code(head.id), value: code },
      ...entries.map((entry) => ({ key: this.keys.entry(head.id, entry.seq), value: JSON.stringify(entry) })),
      { key: this.keys.head(head.id), value: JSON.stringify(head) },
    ]);
  }

  async readHead(executionId: string): Promise<ExecutionHead | undefined> {
    const text = await this.guard("read an execution", () => this.keyv.get(this.keys.head(executionId)));
    return text === undefined || text === null ? undefined : parseJson<ExecutionHead>(text, "execution record");
  }

  async readHeads(executionIds: string[]): Promise<Array<ExecutionHead | undefined>> {
    const texts = await this.getMany(executionIds.map((id) => this.keys.head(id)));
    return texts.map((text) =>
      text === undefined || text === null ? undefined : parseJson<ExecutionHead>(text, "execution record"),
    );
  }

  /**
   * Writes the head, with the entries and the final result that change with it, in one batch.
   * The result and entries are listed first: a store that applies a batch in order never shows
   * a head whose result is not there yet.
   */
  async writeHead(
    writer: StoreWriter,
    head: ExecutionHead,
    extra: { entries?: StoredEntry[]; result?: StoredResult; renew?: boolean } = {},
  ): Promise<void> {
    const batch: Array<{ key: string; value: string }> = [];
    if (extra.result) batch.push({ key: this.keys.result(head.id), value: JSON.stringify(extra.result) });
    for (const entry of extra.entries ?? [])
      batch.push({ key: this.keys.entry(head.id, entry.seq), value: JSON.stringify(entry) });
    batch.push({ key: this.keys.head(head.id), value: JSON.stringify(head) });
    await this.write(writer, batch, "write an execution", extra.renew);
  }

  /** Code and every log entry of an execution, in one batched read (R-ST-2). */
  async readCodeAndLog(head: ExecutionHead): Promise<{ code: string; log: Map<number, StoredEntry> }> {
    const keys = [this.keys.code(head.id)];
    for (let seq = 0; seq < head.seqLimit; seq++) keys.push(this.keys.entry(head.id, seq));
    const values = await this.getMany(keys);
    const code = values[0];
    if (typeof code !== "string")
      throw new CodemodeError("STORAGE_ERROR", `the code of execution ${head.id} is missing from the store`);
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
    return texts.map((text) =>
      text === undefined || text === null ? undefined : parseJson<StoredEntry>(text, "log entry"),
    );
  }

  /** Entries of several executions in one batched read (the pending actions of a page). */
  async readEntriesAt(
    refs: ReadonlyArray<{ executionId: string; seq: number }>,
  ): Promise<Array<StoredEntry | undefined>> {
    const texts = await this.getMany(refs.map((ref) => this.keys.entry(ref.executionId, ref.seq)));
    return texts.map((text) =>
      text === undefined || text === null ? undefined : parseJson<StoredEntry>(text, "log entry"),
    );
  }

  /** Entries of one execution in one batch, applied in the order given (see `writeHead`). */
  async writeEntries(writer: StoreWriter, executionId: string, entries: StoredEntry[]): Promise<void> {
    const batch = entries.map((entry) => ({
      key: this.keys.entry(executionId, entry.seq),
      value: JSON.stringify(entry),
    }));
    await this.write(writer, batch, "record a call");
  }

  async readResult(executionId: string): Promise<StoredResult | undefined> {
    const text = await this.guard("read the result", () => this.keyv.get(this.keys.result(executionId)));
    return text === undefined || text === null ? undefined : parseJson<StoredResult>(text, "result record");
  }

  async deleteExecution(head: ExecutionHead): Promise<void> {
    const keys = [
      this.keys.head(head.id),
      this.keys.code(head.id),
      this.keys.result(head.id),
      this.keys.cancel(head.id),
    ];
    for (let seq = 0; seq < head.seqLimit; seq++) keys.push(this.keys.entry(head.id, seq));
    await this.access.deleteMany(keys, "delete an execution");
  }

  /**
   * Asks whoever runs the execution to stop it (`runtime.cancel`): written without its lease,
   * which a running pass holds, and kept for `ttlMs` (a pass that never reads it needs it no longer).
   */
  async requestCancel(executionId: string, request: CancelRequest, ttlMs: number): Promise<void> {
    await this.guard("ask to cancel an execution", () =>
      this.keyv.set(this.keys.cancel(executionId), JSON.stringify(request), ttlMs),
    );
  }

  /**
   * The cancel request of an execution, if any. What the store holds is read as hostile: only a
   * well-formed request counts, with its texts bounded; anything else is no request.
   */
  async readCancel(executionId: string): Promise<CancelRequest | undefined> {
    const text = await this.guard("read a cancel request", () => this.keyv.get(this.keys.cancel(executionId)));
    if (typeof text !== "string" || text.length > MAX_CANCEL_CHARS) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof value !== "object" || value === null) return undefined;
    const { at, by, reason } = value as Record<string, unknown>;
    if (typeof at !== "number" || !Number.isFinite(at)) return undefined;
    return {
      at,
      ...(typeof by === "string" ? { by: by.slice(0, MAX_CANCEL_TEXT) } : {}),
      ...(typeof reason === "string" ? { reason: reason.slice(0, MAX_CANCEL_TEXT) } : {}),
    };
  }

  async getRaw(key: string): Promise<unknown> {
    return this.guard("read the store", () => this.keyv.get(key));
  }

  async setRaw(key: string, value: string): Promise<void> {
    await this.guard("write the store", () => this.keyv.set(key, value));
  }

  /** A batch written by the lease's holder: fenced where the lock can, one `set` when it is one key. */
  private write(
    writer: StoreWriter,
    batch: Array<{ key: string; value: string }>,
    what: string,
    renew = false,
  ): Promise<void> {
    const plain = async () => {
      if (batch.length === 1) await this.guard(what, () => this.keyv.set(batch[0]!.key, batch[0]!.value));
      else await this.setMany(batch);
    };
    return writer.write(batch, plain, { renew });
  }

  private getMany(keys: string[]): Promise<unknown[]> {
    return this.access.getMany(keys, "read the store");
  }

  private setMany(entries: Array<{ key: string; value: string }>): Promise<void> {
    return this.access.setMany(entries, "write the store");
  }

  private guard<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return this.access.guard(what, operation);
  }
}

function parseJson<T>(text: unknown, what: string): T {
  if (typeof text !== "string")
    throw new CodemodeError("STORAGE_ERROR", `the store returned a ${what} that is not text`);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CodemodeError("STORAGE_ERROR", `the store returned a ${what} that is not valid JSON`);
  }
}
