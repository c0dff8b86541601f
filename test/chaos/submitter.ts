/**
 * The web process of a chaos test: submits the fleet PROGRAM through `queue.submit` and keeps
 * every execution id it was ever handed — an accepted submit's, and the one an error outcome
 * carries — so the checker can find a run that a submit left behind (an orphan).
 */
import type { CodemodeQueue } from "@codemode/bullmq";
import { PROGRAM } from "../fleet-processes/shared.ts";
import { sleep } from "./timing.ts";

export interface SubmitAnswer {
  executionId: string | undefined;
  /** "accepted", or the error outcome's code ("THREW" when the call rejected). */
  answer: string;
  error?: string;
  at: number;
}

export class Submitter {
  /** Every answer, in order. */
  readonly answers: SubmitAnswer[] = [];
  /** Ids of accepted submits. */
  readonly accepted: string[] = [];
  /** Submits answered STORAGE_ERROR (each retried by `submitRun`). */
  storageErrors = 0;
  /** When the last submit answered. */
  lastAnswerAt = 0;

  constructor(private readonly queue: CodemodeQueue) {}

  /** Every id handed out, accepted or not. */
  get handedOut(): string[] {
    return [...new Set(this.answers.flatMap((answer) => (answer.executionId ? [answer.executionId] : [])))];
  }

  /** One submit, recorded whatever it answers. */
  async submitOnce(): Promise<SubmitAnswer> {
    let answer: SubmitAnswer;
    try {
      const submitted = await this.queue.submit({ code: PROGRAM });
      answer =
        "status" in submitted
          ? { executionId: submitted.executionId, answer: submitted.code, error: submitted.error, at: Date.now() }
          : { executionId: submitted.executionId, answer: "accepted", at: Date.now() };
    } catch (error) {
      answer = { executionId: undefined, answer: "THREW", error: String(error), at: Date.now() };
    }
    this.answers.push(answer);
    this.lastAnswerAt = answer.at;
    if (answer.answer === "accepted" && answer.executionId) this.accepted.push(answer.executionId);
    if (answer.answer === "STORAGE_ERROR") this.storageErrors++;
    return answer;
  }

  /** Submits one run, trying again (after `retryMs`) while the submit answers STORAGE_ERROR. */
  async submitRun(retryMs = 200): Promise<SubmitAnswer> {
    for (;;) {
      const answer = await this.submitOnce();
      if (answer.answer !== "STORAGE_ERROR") return answer;
      await sleep(retryMs);
    }
  }

  /** Submits until `runs` submits were accepted, one every `everyMs`. */
  async submitRuns(runs: number, everyMs: number): Promise<void> {
    while (this.accepted.length < runs) {
      const started = Date.now();
      await this.submitRun();
      await sleep(Math.max(0, everyMs - (Date.now() - started)));
    }
  }

  /** Answers other than accepted and STORAGE_ERROR, by code. */
  otherAnswers(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { answer } of this.answers)
      if (answer !== "accepted" && answer !== "STORAGE_ERROR") counts[answer] = (counts[answer] ?? 0) + 1;
    return counts;
  }
}
