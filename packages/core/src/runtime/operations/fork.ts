import { randomUUID } from "node:crypto";
import { ExecutionStore } from "../../log/execution-store.js";
import type { StoredEntry } from "../../log/interface.js";
import { errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import type { SeededHead } from "../passes/index.js";
import { failureOutcome } from "../transitions/index.js";
import { handOver } from "./control-step.js";
import { checkCode, newHead, storeNew } from "./execute.js";

export interface ForkInput {
  /** The execution whose log the fork starts from; it is never changed. */
  executionId: string;
  /** The fork keeps the original's log entries before this seq; from it on, calls run live. */
  fromSeq: number;
  /** New code for the fork; default the original's. */
  code?: string;
}

/**
 * A new execution whose log is the original's prefix before `fromSeq`, with the same code or a
 * new one, and the original's replay-stable clock and randomness; its first pass runs at once:
 * the prefix replays and every call from `fromSeq` on runs live, under the usual approvals. The
 * original is untouched; the fork records where it came from (`forkedFrom`). Resolves to the
 * fork's outcome (R-RT-1): NOT_FOUND for an unknown execution or a seq it cannot start from,
 * BUSY while the original runs, NOT_PAUSED when a call before `fromSeq` was left under way.
 */
export async function fork(context: RuntimeContext, input: ForkInput): Promise<Outcome> {
  const { executionId, fromSeq } = checkInput(input);
  const forkId = randomUUID();
  const fail = (code: "NOT_FOUND" | "BUSY" | "NOT_PAUSED", message: string) =>
    errorOutcome(forkId, code, message, { calls: [] });
  let original: SeededHead | undefined;
  let code: string;
  let log: Map<number, StoredEntry>;
  try {
    original = await context.store.readHead(executionId);
    if (!original) return fail("NOT_FOUND", `there is no execution ${executionId} to fork`);
    if (original.status === "running")
      return fail("BUSY", `execution ${executionId} is running; fork it once it paused or ended`);
    ({ code, log } = await context.store.readCodeAndLog(original));
  } catch (error) {
    return failureOutcome(forkId, error, []);
  }
  const forkCode = input.code ?? code;
  const refused = checkCode(forkId, forkCode, "fork");
  if (refused) return refused;
  const start = prefixOf(log, fromSeq);
  if (!start.ok) return fail(start.code, start.message);
  const { prefix } = start;

  const head: SeededHead = {
    ...newHead(context, forkId, forkCode),
    // The same clock and randomness, so the prefix replays as it was recorded (R-SB-6).
    deterministic: original.deterministic,
    seed: original.seed,
    clockMs: original.clockMs,
    seqLimit: fromSeq === 0 ? 0 : ExecutionStore.seqLimitFor(fromSeq - 1),
    forkedFrom: { executionId: original.id, fromSeq },
  };
  if (typeof original.secretSeed === "string") head.secretSeed = original.secretSeed;
  else delete head.secretSeed;
  const options = {
    waitMs: 0,
    busy: () => fail("BUSY", "could not take the fork's lease"),
    failed: (error: unknown) => failureOutcome(forkId, error, []),
  };
  return handOver(context, forkId, options, async (_lease, start) => {
    const failed = await storeNew(context, head, forkCode, prefix);
    if (failed) return failed;
    return start({ head, code: forkCode, log: new Map(prefix.map((entry) => [entry.seq, entry])) });
  });
}

function checkInput(input: ForkInput): { executionId: string; fromSeq: number } {
  if (typeof input !== "object" || input === null)
    throw new TypeError("fork(input): input must be { executionId, fromSeq, code? }");
  if (typeof input.executionId !== "string" || input.executionId === "")
    throw new TypeError("fork(input): executionId must be a non-empty string");
  if (!Number.isSafeInteger(input.fromSeq) || input.fromSeq < 0)
    throw new TypeError(`fork(input): fromSeq must be an integer ≥ 0; got ${String(input.fromSeq)}`);
  if (input.code !== undefined && typeof input.code !== "string")
    throw new TypeError("fork(input): code must be a string when given");
  return { executionId: input.executionId, fromSeq: input.fromSeq };
}

/** The entries a fork starts with, or why it cannot start there, with the code that says so. */
type ForkStart = { ok: true; prefix: StoredEntry[] } | { ok: false; code: "NOT_FOUND" | "NOT_PAUSED"; message: string };

/**
 * The entries a fork starts with, or why it cannot start at `fromSeq`: beyond the log's end or
 * inside a `codemode.step` (whose calls replay as one), NOT_FOUND: there is no such place to start;
 * after a call left under way (its effect is unknown), NOT_PAUSED: recover the original first
 * (waiting and trying again, as BUSY would say, does not help). A pending call keeps no approval:
 * the fork asks again.
 */
function prefixOf(log: ReadonlyMap<number, StoredEntry>, fromSeq: number): ForkStart {
  const entries = [...log.values()].sort((a, b) => a.seq - b.seq);
  const end = entries.length === 0 ? 0 : (entries[entries.length - 1] as StoredEntry).seq + 1;
  const notFound = (message: string): ForkStart => ({ ok: false, code: "NOT_FOUND", message });
  if (fromSeq > end)
    return notFound(`seq ${fromSeq} is beyond the log of this execution, which ends before seq ${end}`);
  const prefix: StoredEntry[] = [];
  for (const entry of entries) {
    if (entry.seq >= fromSeq) break;
    const isStep = entry.connector === "codemode" && entry.method === "step";
    const after = entry.seqAfter ?? entry.seq + 1;
    if (isStep && after > fromSeq)
      return notFound(
        `seq ${fromSeq} is inside the codemode.step at seq ${entry.seq}; fork from seq ${entry.seq} or from seq ${after}`,
      );
    if (entry.state === "executing")
      return {
        ok: false,
        code: "NOT_PAUSED",
        message: `the call at seq ${entry.seq} (${entry.connector}.${entry.method}) was left under way; recover the original execution first (or rerun it, if it failed)`,
      };
    if (entry.state === "pending") {
      const { decision: _decision, ...asked } = entry;
      prefix.push(asked);
    } else prefix.push(withoutGrant(entry));
  }
  return { ok: true, prefix };
}

/**
 * A copied entry keeps its decision for the audit trail, but not a grant: a grant was given for
 * the original run's later calls, and must not approve a fork's (possibly new) code unasked.
 */
function withoutGrant(entry: StoredEntry): StoredEntry {
  if (!entry.decision?.grant) return { ...entry };
  const { grant: _grant, ...decision } = entry.decision;
  return { ...entry, decision };
}
