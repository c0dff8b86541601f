import { randomUUID } from "node:crypto";
import { MAX_DURABLE_CHARS } from "../../log/durable-value.js";
import type { StoredEntry } from "../../log/interface.js";
import { type ErrorOutcome, errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { newSecretSeed, type SeededHead } from "../passes/index.js";
import { failureOutcome, listNew } from "../transitions/index.js";
import { handOver } from "./control-step.js";
import { pruneAfterExecute } from "./prune.js";

/** What `execute` and `submit` take: the program, and who asked for it. */
export interface NewRunInput {
  code: string;
  /**
   * Who asked for this run (a user, an agent, an MCP client), kept on the execution and shown
   * where people decide on it: the approval inbox, `codemode show` (up to 200 characters).
   */
  by?: string;
}

/** Who asked, as kept: a non-empty string, cut to 200 characters; anything else is nobody. */
function requesterOf(input: NewRunInput | undefined): string | undefined {
  const by: unknown = (input as { by?: unknown } | undefined)?.by;
  return typeof by === "string" && by.trim() !== "" ? by.slice(0, 200) : undefined;
}

/**
 * Runs new code as a new execution: stored first (R-RE-1), listed, then run under its lease.
 * `direct` marks a direct call's run (`callTool`) with the tool it calls.
 * Older terminal executions beyond `maxExecutions` are pruned beside the pass.
 */
export async function execute(context: RuntimeContext, input: NewRunInput, direct?: string): Promise<Outcome> {
  const executionId = randomUUID();
  const code: unknown = (input as { code?: unknown } | undefined)?.code;
  const refused = checkCode(executionId, code, direct === undefined ? "execute" : "callTool");
  if (refused) return refused;
  // Its sandbox host may read the program while the new execution is stored.
  context.executor.anticipate?.(code as string);
  const head = newHead(context, executionId, code as string, requesterOf(input));
  // A direct call's run (`callTool`) may call its one tool even when only the model may.
  if (direct !== undefined) head.direct = direct;
  const options = {
    waitMs: 0,
    busy: () => errorOutcome(executionId, "BUSY", "could not take the new execution's lease", { calls: [] }),
    failed: (error: unknown) => failureOutcome(executionId, error, []),
  };
  return handOver(context, executionId, options, async (_lease, start) => {
    const failed = await storeNew(context, head, code as string);
    if (failed) return failed;
    // R-RE-1: then older terminal executions beyond maxExecutions go, with their logs, beside the
    // pass (which mostly waits on the sandbox); they are gone before execute returns. The new
    // execution is running, so it is never among them.
    const pruned = pruneAfterExecute(context);
    const outcome = await start({ head, code: code as string, log: new Map() });
    await pruned;
    return outcome;
  });
}

/**
 * Stores and lists a new execution without running it: a worker runs its first pass with
 * `recover({ executionId })` (that is how `@codemode/bullmq` hands work to workers: job data
 * carries the id, the code stays in the store). Until then it is `running` with no pass and no
 * lease; `expirePaused` ends it only once it is older than the cutoff.
 */
export async function submit(
  context: RuntimeContext,
  input: NewRunInput,
): Promise<{ executionId: string } | ErrorOutcome> {
  const executionId = randomUUID();
  const code: unknown = (input as { code?: unknown } | undefined)?.code;
  const refused = checkCode(executionId, code, "submit");
  if (refused) return refused;
  const head = newHead(context, executionId, code as string, requesterOf(input));
  const failed = await storeNew(context, head, code as string);
  if (failed) return failed;
  await pruneAfterExecute(context);
  return { executionId };
}

/**
 * Listed first, then stored (R-RE-1: the record exists before anything runs). Whatever a store
 * that fails halfway leaves, nothing is lost from sight: a listing row whose record never came is
 * dropped by the next reader (once it is older than `ORPHAN_ROW_GRACE_MS`), and a record that was
 * written although the store's answer was lost is listed, so `recover` and the fleet find it.
 * Stored the other way round, a record whose listing failed, and whose removal failed too while
 * the store was down, was a `running` run nobody could ever find. On a failure the new execution
 * is taken back as far as the store lets, and the failure (STORAGE_ERROR) is the answer.
 */
export async function storeNew(
  context: RuntimeContext,
  head: SeededHead,
  code: string,
  entries: readonly StoredEntry[] = [],
): Promise<ErrorOutcome | undefined> {
  try {
    await listNew(context, head);
    await context.store.createExecution(head, code, entries);
    return undefined;
  } catch (error) {
    await context.store.deleteExecution(head).catch(() => undefined);
    await context.index.remove(head).catch(() => undefined);
    return failureOutcome(head.id, error, []);
  }
}

export function checkCode(executionId: string, code: unknown, operation: string): ErrorOutcome | undefined {
  if (typeof code !== "string")
    return errorOutcome(executionId, "SANDBOX_ERROR", `${operation} needs { code: string }`, { calls: [] });
  if (code.length > MAX_DURABLE_CHARS) {
    return errorOutcome(
      executionId,
      "VALUE_TOO_LARGE",
      `the code is ${code.length.toLocaleString("en")} characters, over the ${MAX_DURABLE_CHARS.toLocaleString("en")} limit: keep programs small and read large data through a connector`,
      { calls: [] },
    );
  }
  return undefined;
}

export function newHead(context: RuntimeContext, executionId: string, code: string, requestedBy?: string): SeededHead {
  const now = Date.now();
  return {
    ...(requestedBy !== undefined ? { requestedBy } : {}),
    id: executionId,
    status: "running",
    createdAt: now,
    updatedAt: now,
    connectors: context.connectorsIn(code),
    seqLimit: 0,
    deterministic: context.settings.deterministic,
    seed: executionId,
    // R-SB-6, issue 17.10: randomness comes from a secret kept in the record, not from the id every outcome shows.
    secretSeed: newSecretSeed(),
    clockMs: now,
    passes: 0,
  };
}
