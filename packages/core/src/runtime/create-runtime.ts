import { randomUUID } from "node:crypto";
import { createArgsValidator, type ArgsValidator } from "../connectors/validate-args.js";
import { decodeDurable, MAX_DURABLE_CHARS } from "../log/durable-value.js";
import { ExecutionStore, type ExecutionHead, type IndexItem, type StoredEntry } from "../log/execution-store.js";
import type { Lease } from "../log/lock.js";
import {
  CodemodeError,
  errorOutcome,
  type ErrorCode,
  type ExecutionState,
  type LogEntry,
  type Outcome,
  type PendingAction,
  type RollbackReport,
} from "../outcome.js";
import { createIsolatedVmExecutor } from "../sandbox/isolated-vm-executor.js";
import { deleteOne, expireStale, pruneTerminal, rollbackExecution, runDisposeHooks, runPassEndHooks, setIndexStatus as writeIndexStatus, type LifecycleContext } from "./lifecycle.js";
import { SnippetStore, type Snippet } from "../snippets/snippets.js";
import { Discovery, type DescribeOutput, type SearchOutput } from "./discovery.js";
import { modelDescription, type ModelDescriptionOptions } from "./model-description.js";
import { runPass, type PassEnd } from "./run-pass.js";
import { checkOptions, DEFAULTS, type CodemodeRuntimeOptions } from "./runtime-options.js";
import { decisionOf, toExecutionState, toLogEntries, toPendingAction } from "./log-view.js";

export type { CodemodeRuntimeOptions } from "./runtime-options.js";
export { toLogEntries } from "./log-view.js";

export interface CodemodeRuntime {
  /** Runs new code as a new execution. */
  execute(input: { code: string }): Promise<Outcome>;
  /** Approves the pending action of a paused execution and resumes it. */
  approve(input: { executionId: string; seq?: number; by?: string; reason?: string }): Promise<Outcome>;
  /** Rejects the pending action: the execution ends `rejected`. False when that action was not pending. */
  reject(input: { executionId: string; seq: number; by?: string; reason?: string }): Promise<boolean>;
  /** Pending actions of one execution, or of every paused one (newest first). */
  pending(executionId?: string): Promise<PendingAction[]>;
  /** Executions, newest first; their `log` is loaded by `execution(id)`. */
  executions(limit?: number): Promise<ExecutionState[]>;
  /** One execution with its log, or null. */
  execution(executionId: string): Promise<ExecutionState | null>;
  /** Reverts applied calls, newest first, with each tool's `revert`; a report, never a throw. */
  rollback(input: { executionId: string }): Promise<RollbackReport>;
  /** Deletes an execution and its log (disposing it when it was not terminal). False when unknown or busy. */
  deleteExecution(executionId: string): Promise<boolean>;
  /** Deletes terminal executions beyond the newest `keep` (default 50); returns how many. */
  pruneExecutions(keep?: number): Promise<number>;
  /** Paused runs older than `maxAgeMs` (default 24 h) become rejected; running runs whose host is gone become error. */
  expirePaused(options?: { maxAgeMs?: number }): Promise<string[]>;
  /** Saves an execution's code as a snippet the model can find and run (R-SN-1); any status is accepted. */
  saveSnippet(name: string, input: { executionId: string; description?: string; inputSchema?: Record<string, unknown> }): Promise<Snippet | null>;
  snippets(): Promise<Snippet[]>;
  deleteSnippet(name: string): Promise<boolean>;
  /** Ranks connector methods and snippets, like `codemode.search` in the sandbox (R-SN-3). */
  search(query: string): Promise<SearchOutput>;
  /** TypeScript declarations of a connector or method, or a snippet's source, like `codemode.describe`. */
  describe(target: string): Promise<DescribeOutput>;
  /** The text that tells a model how to use this runtime's Code Mode tool (R-AI-2). */
  modelDescription(options?: Omit<ModelDescriptionOptions, "allowNetwork">): string;
  /** Releases isolates and timers the runtime holds. */
  close(): Promise<void>;
}


/**
 * Creates the host-side runtime. Bad options throw here; nothing after creation throws for what
 * the model's code or a stale id did (R-RT-1).
 *
 * @example
 * const runtime = createCodemodeRuntime({ connectors: [github] });
 * const outcome = await runtime.execute({ code: "async () => github.list_issues({ repo: 'acme/web' })" });
 * if (outcome.status === "paused") await runtime.approve({ executionId: outcome.executionId });
 */
export function createCodemodeRuntime(options: CodemodeRuntimeOptions = {}): CodemodeRuntime {
  const settings = checkOptions(options);
  const { connectors, keyv, lock } = settings;
  const store = new ExecutionStore(keyv, settings.name);
  const executor = options.executor ?? createIsolatedVmExecutor({ timeoutMs: settings.timeoutMs, memoryMb: settings.memoryMb, prewarm: options.prewarmIsolates ?? 0 });
  const ownsExecutor = options.executor === undefined;
  const connectorNames = [...connectors.keys()];
  // A connector counts as used when its name appears in the code as an identifier (R-AP-5).
  const connectorPatterns = connectorNames.map((name) => ({ name, pattern: new RegExp(`(^|[^\\w$.])${name.replace(/\$/g, "\\$")}(?![\\w$])`) }));
  const validators = new Map<string, ArgsValidator>();
  for (const connector of connectors.values()) {
    for (const [method, tool] of Object.entries(connector.tools)) {
      if (tool.inputSchema !== undefined) validators.set(`${connector.name}.${method}`, createArgsValidator(`${connector.name}.${method}`, tool));
    }
  }

  const snippetStore = new SnippetStore(store);
  const discovery = new Discovery(connectors, snippetStore);

  const acquire = (executionId: string, waitMs: number) => lock.acquire(store.keys.lock(executionId), { ttlMs: settings.leaseMs, waitMs });

  const logger = options.logger ?? console;
  const lifecycle: LifecycleContext = {
    store,
    lock,
    connectors,
    leaseMs: settings.leaseMs,
    lockWaitMs: settings.lockWaitMs,
    updateIndex,
    warn: (message) => logger.warn(`[codemode] ${message}`),
  };

  /** The snippet catalogue is one key: its read-modify-write runs under a lock. */
  async function updateSnippets<T>(change: () => Promise<T>): Promise<T> {
    const lease = await lock.acquire(store.keys.snippetsLock, { ttlMs: settings.leaseMs, waitMs: settings.lockWaitMs });
    if (!lease) throw new CodemodeError("BUSY", "the snippet catalogue stayed locked; try again");
    try {
      return await change();
    } finally {
      await lease.release();
    }
  }

  async function updateIndex(change: (items: IndexItem[]) => IndexItem[]): Promise<void> {
    const lease = await lock.acquire(store.keys.indexLock, { ttlMs: settings.leaseMs, waitMs: settings.lockWaitMs });
    if (!lease) throw new CodemodeError("BUSY", "the execution index stayed locked; try again");
    try {
      await store.writeIndex(change(await store.readIndex()));
    } finally {
      await lease.release();
    }
  }

  const setIndexStatus = (head: ExecutionHead) => writeIndexStatus(lifecycle, head);

  /** Runs a pass while holding the lease, then records how it ended. */
  async function runAndSettle(head: ExecutionHead, code: string, log: Map<number, StoredEntry>, lease: Lease): Promise<Outcome> {
    let lostTo = "held elsewhere";
    let leaseLost = false;
    /**
     * R-ST-4 fencing: true while this pass still owns the execution — its lease renewed, or (after
     * a lapse nobody acted on) retaken with the record still `running`. A lease's `renew` answers
     * false once its token no longer owns the key, so this holds across processes; it throws when
     * the store cannot say.
     */
    const holdLease = async (): Promise<boolean> => {
      if (await lease.renew(settings.leaseMs)) return true;
      const retaken = await acquire(head.id, 0);
      const stored = retaken ? await store.readHead(head.id) : undefined;
      if (retaken && stored?.status === "running") {
        lease = retaken;
        return true;
      }
      await retaken?.release().catch(() => undefined);
      lostTo = stored?.status ?? "held elsewhere";
      return false;
    };
    // Renewed well within its length: a longer interval would let a short lease lapse mid-pass.
    // Once the lease is lost for good, the pass runs nothing more (checked on every request).
    const renewal = setInterval(() => {
      holdLease().then(
        (held) => {
          if (!held) leaseLost = true;
        },
        () => undefined,
      );
    }, settings.leaseMs / 3);
    const takenOver = () =>
      new CodemodeError("BUSY", `execution ${head.id} was taken over while this pass ran (its lease lapsed; it is now ${lostTo}); this pass's result is not recorded`);
    try {
      head.passes += 1;
      const end = await runPass({
        head,
        code,
        log,
        connectors,
        validators,
        discovery,
        store,
        executor,
        timeoutMs: settings.timeoutMs,
        memoryMb: settings.memoryMb,
        allowNetwork: settings.allowNetwork,
        confirmLease: async () => {
          if (!(await holdLease())) throw takenOver();
        },
        leaseLost: () => (leaseLost ? takenOver().message : undefined),
      });
      let held: boolean;
      try {
        held = await holdLease();
      } catch (error) {
        // The store failed while checking the lease: nothing more can be recorded. The run stays
        // `running` under a lease that will lapse, so it can be expired later (R-ST-5).
        const cause =
          end.kind === "error" && end.code === "STORAGE_ERROR"
            ? new CodemodeError("STORAGE_ERROR", end.message)
            : CodemodeError.isInstance(error)
              ? error
              : new CodemodeError("STORAGE_ERROR", `the store failed to check the execution's lease: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        return failure(head.id, cause, log, end.logs);
      }
      if (!held) return failure(head.id, takenOver(), log);
      const outcome = await settle(head, log, end);
      clearInterval(renewal);
      await lease.release().catch(() => undefined);
      // Hooks run once the record is written and the lease is free; they keep no instance memory.
      if (head.status !== "running") await runPassEndHooks(lifecycle, head.id, head.status === "paused" ? "paused" : (head.status as Exclude<typeof head.status, "running" | "paused">));
      return outcome;
    } catch (error) {
      return failure(head.id, error, log);
    } finally {
      clearInterval(renewal);
      await lease.release().catch(() => undefined);
    }
  }

  async function settle(head: ExecutionHead, log: Map<number, StoredEntry>, end: PassEnd): Promise<Outcome> {
    head.updatedAt = Date.now();
    const calls = toLogEntries(log);
    const logs = end.logs.length > 0 ? { logs: end.logs } : {};
    try {
      if (end.kind === "paused") {
        head.status = "paused";
        head.pendingSeq = end.pendingSeq;
        await store.writeHead(head);
        await setIndexStatus(head);
        const entry = log.get(end.pendingSeq);
        const pending = entry ? [toPendingAction(head.id, entry)] : [];
        return { status: "paused", executionId: head.id, pending, ...logs, calls };
      }
      if (end.kind === "error") {
        head.status = "error";
        head.error = end.message;
        head.errorCode = end.code;
        delete head.pendingSeq;
        await store.writeResultAndHead(head, end.logs.length > 0 ? { logs: end.logs } : {});
        await setIndexStatus(head);
        return errorOutcome(head.id, end.code, end.message, { ...logs, calls });
      }
      // R-DV-2: the final result is not limited; the record keeps it only when it fits.
      const kept =
        end.resultText.length <= MAX_DURABLE_CHARS
          ? { result: end.resultText }
          : { omitted: `the result was ${end.resultText.length.toLocaleString("en")} characters once serialized; only results up to ${MAX_DURABLE_CHARS.toLocaleString("en")} are kept in the record` };
      head.status = "completed";
      delete head.pendingSeq;
      await store.writeResultAndHead(head, { ...kept, ...(end.logs.length > 0 ? { logs: end.logs } : {}) });
      await setIndexStatus(head);
      // Transformed before the logs are handed out: a transform failure adds a line to them.
      const result = transform(decodeDurable(end.resultText), end.logs);
      return { status: "completed", executionId: head.id, result, ...(end.logs.length > 0 ? { logs: end.logs } : {}), calls };
    } catch (error) {
      return failure(head.id, error, log, end.logs);
    }
  }

  function transform(raw: unknown, logs: string[]): unknown {
    if (!options.transformResult) return raw;
    try {
      return options.transformResult(raw);
    } catch (error) {
      logs.push(`[error] transformResult threw (${error instanceof Error ? error.message : String(error)}); the model gets the raw result`);
      return raw;
    }
  }

  function failure(executionId: string, error: unknown, log?: Map<number, StoredEntry> | LogEntry[], logs?: string[]): Outcome {
    const code: ErrorCode = CodemodeError.isInstance(error) ? error.code : "SANDBOX_ERROR";
    const message = error instanceof Error ? error.message : String(error);
    const extra: { logs?: string[]; calls?: LogEntry[] } = {};
    if (logs) extra.logs = logs;
    if (log) extra.calls = Array.isArray(log) ? log : toLogEntries(log);
    return errorOutcome(executionId, code, message, extra);
  }

  /** The log as it stands, read without the lock, for an outcome that could not take it (R-RT-2). */
  async function currentCalls(executionId: string): Promise<LogEntry[]> {
    try {
      const head = await store.readHead(executionId);
      return head ? toLogEntries((await store.readCodeAndLog(head)).log) : [];
    } catch {
      return [];
    }
  }

  return {
    async execute(input) {
      const executionId = randomUUID();
      const code: unknown = (input as { code?: unknown } | undefined)?.code;
      if (typeof code !== "string") return errorOutcome(executionId, "SANDBOX_ERROR", "execute needs { code: string }", { calls: [] });
      if (code.length > MAX_DURABLE_CHARS) {
        return errorOutcome(executionId, "VALUE_TOO_LARGE", `the code is ${code.length.toLocaleString("en")} characters, over the ${MAX_DURABLE_CHARS.toLocaleString("en")} limit: keep programs small and read large data through a connector`, { calls: [] });
      }
      const now = Date.now();
      const head: ExecutionHead = {
        id: executionId,
        status: "running",
        createdAt: now,
        updatedAt: now,
        connectors: connectorPatterns.filter(({ pattern }) => pattern.test(code)).map(({ name }) => name),
        seqLimit: 0,
        deterministic: settings.deterministic,
        seed: executionId,
        clockMs: now,
        passes: 0,
      };
      let lease: Lease | null;
      try {
        lease = await acquire(executionId, 0);
      } catch (error) {
        // R-RT-1: a lock on a store that is down is an outcome, not a throw.
        return failure(executionId, new CodemodeError("STORAGE_ERROR", `could not take the new execution's lease: ${error instanceof Error ? error.message : String(error)}`), new Map());
      }
      if (!lease) return errorOutcome(executionId, "BUSY", "could not take the new execution's lease", { calls: [] });
      try {
        // R-RE-1: stored first, so a crash right after still leaves a record.
        await store.createExecution(head, code);
      } catch (error) {
        await lease.release().catch(() => undefined);
        return failure(executionId, error, new Map());
      }
      let index: IndexItem[] = [];
      try {
        await updateIndex((items) => (index = [{ id: head.id, status: head.status, createdAt: head.createdAt, updatedAt: head.updatedAt }, ...items]));
      } catch (error) {
        // Unlisted, it could never be expired or pruned: nothing has run, so take it back.
        await store.deleteExecution(head).catch(() => undefined);
        await lease.release().catch(() => undefined);
        return failure(executionId, error, new Map());
      }
      // R-RE-1: then older terminal executions beyond maxExecutions go, with their logs (chosen
      // from the index as just written, which saves reading it again). They are deleted while
      // the pass runs, which mostly waits on the sandbox, and are gone before execute returns.
      // The new execution is running, so it is never among them.
      const pruned = pruneTerminal(lifecycle, settings.maxExecutions, index).catch((error: unknown) => lifecycle.warn(`pruning failed: ${error instanceof Error ? error.message : String(error)}`));
      const outcome = await runAndSettle(head, code, new Map(), lease);
      await pruned;
      return outcome;
    },

    async approve(input) {
      const executionId = typeof input?.executionId === "string" ? input.executionId : "";
      if (!executionId) return errorOutcome(String(input?.executionId ?? ""), "NOT_FOUND", "approve needs an executionId", { calls: [] });
      let lease: Lease | null;
      try {
        lease = await acquire(executionId, settings.lockWaitMs);
      } catch (error) {
        return failure(executionId, new CodemodeError("STORAGE_ERROR", `could not take the execution's lock: ${error instanceof Error ? error.message : String(error)}`), await currentCalls(executionId));
      }
      if (!lease) return errorOutcome(executionId, "BUSY", `execution ${executionId} is busy (another pass or control operation holds it); try again`, { calls: await currentCalls(executionId) });
      let handedOver = false;
      try {
        const head = await store.readHead(executionId);
        if (!head) return errorOutcome(executionId, "NOT_FOUND", `no execution ${executionId}`, { calls: [] });
        const { code, log } = await store.readCodeAndLog(head);
        if (head.status !== "paused") {
          // R-AP-3: a stale approval must never revive a finished or running execution.
          return errorOutcome(executionId, "NOT_PAUSED", `execution ${executionId} is ${head.status}; only a paused execution can be approved`, { calls: toLogEntries(log) });
        }
        const pendingSeq = head.pendingSeq;
        const entry = pendingSeq === undefined ? undefined : log.get(pendingSeq);
        if (pendingSeq === undefined || !entry || entry.state !== "pending") {
          return errorOutcome(executionId, "NOT_PAUSED", `execution ${executionId} has no pending action`, { calls: toLogEntries(log) });
        }
        if (input.seq !== undefined && input.seq !== pendingSeq) {
          // R-AP-7: a click on a stale screen must not approve something else.
          return errorOutcome(executionId, "NOT_PAUSED", `action ${String(input.seq)} is not pending; the pending action is seq ${pendingSeq} (${entry.connector}.${entry.method})`, { calls: toLogEntries(log) });
        }
        // The code's own connectors and those its log used (a snippet run inside it may add some).
        const used = new Set([...head.connectors, ...[...log.values()].map((logged) => logged.connector).filter((name) => name !== "codemode")]);
        const missing = [...used].filter((name) => !connectors.has(name));
        if (missing.length > 0) {
          return errorOutcome(executionId, "MISSING_CONNECTOR", `execution ${executionId} uses connector${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, not configured in this runtime`, { calls: toLogEntries(log) });
        }
        const approved: StoredEntry = { ...entry, decision: decisionOf(true, input.by, input.reason) };
        log.set(pendingSeq, approved);
        head.status = "running";
        head.updatedAt = Date.now();
        delete head.pendingSeq;
        await store.writeHeadAndEntry(head, approved);
        // The head is the truth and the pass's end rewrites the index entry: a busy index must not
        // strand a run that is already marked running with its action approved (R-AP-6).
        await setIndexStatus(head);
        handedOver = true;
        return await runAndSettle(head, code, log, lease);
      } catch (error) {
        return failure(executionId, error, await currentCalls(executionId));
      } finally {
        if (!handedOver) await lease.release().catch(() => undefined);
      }
    },

    async reject(input) {
      const executionId = typeof input?.executionId === "string" ? input.executionId : "";
      if (!executionId || typeof input.seq !== "number") return false;
      const lease = await acquire(executionId, settings.lockWaitMs).catch(() => null);
      if (!lease) return false;
      try {
        const head = await store.readHead(executionId);
        if (!head || head.status !== "paused" || head.pendingSeq !== input.seq) return false;
        const [entry] = await store.readEntries(executionId, [input.seq]);
        if (!entry || entry.state !== "pending") return false;
        const decision = decisionOf(false, input.by, input.reason);
        const rejected: StoredEntry = {
          ...entry,
          state: "error",
          error: `rejected${input.by ? ` by ${input.by}` : ""}${input.reason ? `: ${input.reason}` : ""}`,
          decision,
          endedAt: decision.at,
        };
        head.status = "rejected";
        head.updatedAt = decision.at;
        delete head.pendingSeq;
        await store.writeHeadAndEntry(head, rejected);
        await setIndexStatus(head);
        await runDisposeHooks(lifecycle, executionId, "rejected");
        return true;
      } catch {
        return false;
      } finally {
        await lease.release().catch(() => undefined);
      }
    },

    async pending(executionId) {
      try {
        const heads =
          executionId === undefined
            ? await pausedHeads()
            : [await store.readHead(String(executionId))].filter((head): head is ExecutionHead => head?.status === "paused");
        const actions: PendingAction[] = [];
        for (const head of heads) {
          if (head.pendingSeq === undefined) continue;
          const [entry] = await store.readEntries(head.id, [head.pendingSeq]);
          if (entry?.state === "pending") actions.push(toPendingAction(head.id, entry));
        }
        return actions;
      } catch {
        return [];
      }
    },

    async executions(limit = 50) {
      try {
        const items = (await store.readIndex()).slice(0, Math.max(0, limit));
        const heads = await store.readHeads(items.map((item) => item.id));
        const states: ExecutionState[] = [];
        for (const head of heads) {
          if (!head) continue;
          const code = await store.getRaw(store.keys.code(head.id));
          states.push(toExecutionState(head, typeof code === "string" ? code : "", [], undefined));
        }
        return states;
      } catch {
        return [];
      }
    },

    async execution(executionId) {
      try {
        const head = await store.readHead(String(executionId));
        if (!head) return null;
        const { code, log } = await store.readCodeAndLog(head);
        const stored = await store.readResult(head.id);
        return toExecutionState(head, code, toLogEntries(log), stored);
      } catch {
        return null;
      }
    },

    async rollback(input) {
      return rollbackExecution(lifecycle, String(input?.executionId ?? ""));
    },

    async deleteExecution(executionId) {
      try {
        return (await deleteOne(lifecycle, String(executionId))) === true;
      } catch {
        return false;
      }
    },

    async pruneExecutions(keep = DEFAULTS.maxExecutions) {
      try {
        return await pruneTerminal(lifecycle, keep);
      } catch {
        return 0;
      }
    },

    async expirePaused(expireOptions) {
      try {
        return await expireStale(lifecycle, expireOptions?.maxAgeMs ?? 24 * 60 * 60 * 1000);
      } catch {
        return [];
      }
    },

    async saveSnippet(name, input) {
      const executionId = String(input?.executionId ?? "");
      // A stale id is data (R-RT-1): null, like execution(id). A bad name is a host error.
      const head = await store.readHead(executionId);
      if (!head) return null;
      const code = await store.getRaw(store.keys.code(executionId));
      if (typeof code !== "string") return null;
      const snippet: Snippet = { name: String(name), code, connectors: [...head.connectors], executionId, createdAt: Date.now() };
      if (input.description) snippet.description = input.description;
      if (input.inputSchema) snippet.inputSchema = input.inputSchema;
      return updateSnippets(() => snippetStore.save(snippet));
    },

    async snippets() {
      try {
        return await snippetStore.list();
      } catch (error) {
        lifecycle.warn(`could not read the snippet catalogue: ${error instanceof Error ? error.message : String(error)}`);
        return [];
      }
    },

    async deleteSnippet(name) {
      try {
        return await updateSnippets(() => snippetStore.delete(String(name)));
      } catch (error) {
        lifecycle.warn(`could not delete snippet ${String(name)}: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      }
    },

    async search(query) {
      return discovery.search(query);
    },

    async describe(target) {
      return discovery.describe(target);
    },

    modelDescription(descriptionOptions) {
      return modelDescription(connectors.values(), { ...descriptionOptions, allowNetwork: settings.allowNetwork });
    },

    async close() {
      if (ownsExecutor) await executor.close();
    },
  };

  async function pausedHeads(): Promise<ExecutionHead[]> {
    // Heads are the truth: an index entry may lag behind a status change it failed to record.
    const items = (await store.readIndex()).filter((item) => item.status === "paused" || item.status === "running");
    const heads = await store.readHeads(items.map((item) => item.id));
    return heads.filter((head): head is ExecutionHead => head?.status === "paused");
  }
}
