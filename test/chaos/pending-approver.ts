/**
 * The approval inbox of a chaos test, in the test's process: it approves only what
 * `runtime.pending()` lists, so a run it approved is a pause the listing showed while it lasted.
 * Every few hundred ms it lists every pending action and approves each once through
 * `queue.approve`, after recording the approval on the ledger (which proves no gated call ran
 * before it). An approve that answered an error is asked again at the next listing, as the
 * queue's documentation says to; one that was accepted is never asked again. An approve whose
 * answer was lost (an error or no answer while the store went down) may still have queued its job:
 * the run then moves on, so "found in pending() and asked" is what proves the listing showed the
 * pause, and NOT_PAUSED after such an answer is the run having moved on.
 */
import type { CodemodeQueue } from "@codemode/bullmq";
import type { CodemodeRuntime, PendingAction } from "@codemode/core";
import type { Ledger } from "../fleet-processes/shared.ts";
import { within } from "./timing.ts";

/** An approve or a listing that has not answered by then is left (and counted as NO_ANSWER). */
const ANSWER_MS = 30_000;

export interface ApproverFigures {
  /** Actions the approver asked queue.approve for after runtime.pending() listed them, by `<executionId>:<seq>`. */
  asked: Set<string>;
  /** Actions approved (queue.approve accepted), by `<executionId>:<seq>`, with when. */
  approved: Map<string, number>;
  /** Listings of runtime.pending() that rejected (the store was down). */
  listingFailures: number;
  /** queue.approve answers other than success, by code (asked again at the next listing, except NOT_PAUSED). */
  approveErrors: Record<string, number>;
  /** Listed actions that queue.approve then found not pending (NOT_PAUSED), none of whose earlier asks went unanswered or failed. */
  notPaused: string[];
}

export interface PendingApprover {
  readonly figures: ApproverFigures;
  stop(): Promise<void>;
}

export function startPendingApprover(
  runtime: CodemodeRuntime,
  queue: CodemodeQueue,
  ledger: Ledger,
  everyMs = 250,
): PendingApprover {
  const figures: ApproverFigures = {
    asked: new Set(),
    approved: new Map(),
    listingFailures: 0,
    approveErrors: {},
    notPaused: [],
  };
  /** Actions an ask answered an error for, or did not answer: the approval may have been queued all the same. */
  const uncertain = new Set<string>();
  let stopping = false;

  const approve = async (action: PendingAction) => {
    const key = `${action.executionId}:${action.seq}`;
    figures.asked.add(key);
    await ledger.approval(key);
    const answer = await within(
      queue.approve({ executionId: action.executionId, seq: action.seq, by: "approver", reason: "chaos test" }),
      ANSWER_MS,
    );
    if (answer === undefined) {
      figures.approveErrors.NO_ANSWER = (figures.approveErrors.NO_ANSWER ?? 0) + 1;
      uncertain.add(key);
      return;
    }
    if (!("status" in answer)) return void figures.approved.set(key, Date.now());
    figures.approveErrors[answer.code] = (figures.approveErrors[answer.code] ?? 0) + 1;
    if (answer.code === "NOT_PAUSED") {
      if (uncertain.has(key)) figures.approved.set(key, Date.now());
      else figures.notPaused.push(key);
    } else uncertain.add(key);
  };

  const sweep = async () => {
    const listed: PendingAction[] = [];
    try {
      let cursor: string | undefined;
      do {
        const page = await within(runtime.pending({ limit: 1_000, ...(cursor ? { cursor } : {}) }), ANSWER_MS);
        if (!page) throw new Error("runtime.pending() did not answer");
        listed.push(...page.items);
        cursor = page.cursor;
      } while (cursor);
    } catch {
      figures.listingFailures++;
      return;
    }
    const fresh = listed.filter(
      (action) =>
        !figures.approved.has(`${action.executionId}:${action.seq}`) &&
        !figures.notPaused.includes(`${action.executionId}:${action.seq}`),
    );
    await Promise.all(
      fresh.map((action) =>
        approve(action).catch((error: unknown) => {
          uncertain.add(`${action.executionId}:${action.seq}`);
          const code = (error as { code?: unknown }).code;
          const name = typeof code === "string" ? code : "THREW";
          figures.approveErrors[name] = (figures.approveErrors[name] ?? 0) + 1;
        }),
      ),
    );
  };

  const loop = (async () => {
    while (!stopping) {
      await sweep();
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();

  return {
    figures,
    async stop() {
      stopping = true;
      await loop;
    },
  };
}
