/**
 * Decisions racing across worker processes on one store (R-AP-6, R-AP-9): approve pairs, approve
 * racing reject, approve racing edit: each action applies exactly once (at most once where a
 * decision ends the run), the losers get NOT_PAUSED or BUSY, and the outcomes agree with the store.
 */
import { beforeAll, expect, it } from "vitest";
import { readThenApply, type SharedWorkers } from "./setup.ts";
import type { Summary } from "./worker.ts";
import type { Worker } from "./worker-process.ts";

/** The racing stories, within a store's describe. */
export function racingStories(shared: SharedWorkers): void {
  const { backend, cannotRun, runtimeName } = shared;
  let first: Worker;
  let second: Worker;
  beforeAll(() => {
    ({ first, second } = shared);
  });
  it(`R-AP-6 ${backend.racingPairs} racing approve pairs from two processes: each action is applied exactly once, the loser gets NOT_PAUSED or BUSY`, async () => {
    if (cannotRun()) return;
    const name = runtimeName();
    const half = backend.racingPairs / 2;
    const createdAt = Date.now();
    const created = (
      await Promise.all([
        first.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: half }),
        second.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: half }),
      ])
    ).flat();
    expect(created.map((outcome) => outcome.status)).toEqual(created.map(() => "paused"));
    console.log(
      `${backend.label}: ${created.length} paused runs created in ${((Date.now() - createdAt) / 1000).toFixed(1)} s`,
    );
    const ids = created.map((outcome) => outcome.executionId);

    // Both processes approve run i at the same moment, startAt + i * 20 ms.
    const startAt = Date.now() + 300;
    const approvedAt = Date.now();
    const [fromFirst, fromSecond] = await Promise.all([
      first.ask<Summary[]>({ op: "approveMany", name, executionIds: ids, startAt, spacingMs: 20 }),
      second.ask<Summary[]>({ op: "approveMany", name, executionIds: ids, startAt, spacingMs: 20 }),
    ]);
    const approveSeconds = (Date.now() - approvedAt) / 1000;
    const losers: Record<string, number> = {};
    ids.forEach((executionId, index) => {
      const pair = [fromFirst[index]!, fromSecond[index]!];
      const winners = pair.filter((outcome) => outcome.status === "completed");
      expect(winners, `one approval of ${executionId} completes: ${JSON.stringify(pair)}`).toHaveLength(1);
      const loser = pair.find((outcome) => outcome.status !== "completed")!;
      expect(loser.status).toBe("error");
      expect(["NOT_PAUSED", "BUSY"], JSON.stringify(loser)).toContain(loser.code);
      losers[loser.code!] = (losers[loser.code!] ?? 0) + 1;
    });
    const effects = await backend.effects();
    for (const executionId of ids) expect(effects.get(`${executionId}:1`), `applied count of ${executionId}`).toBe(1);
    expect([...effects.values()].reduce((sum, count) => sum + count, 0)).toBe(ids.length);
    const statuses = await first.ask<string[]>({ op: "status", name, executionIds: ids });
    expect(new Set(statuses)).toEqual(new Set(["completed"]));
    const wins = {
      first: fromFirst.filter((outcome) => outcome.status === "completed").length,
      second: fromSecond.filter((outcome) => outcome.status === "completed").length,
    };
    console.log(
      `${backend.label}: ${ids.length} racing pairs in ${approveSeconds.toFixed(1)} s, wins ${JSON.stringify(wins)}, losers ${JSON.stringify(losers)}`,
    );
  }, 120_000);

  it("R-AP-6 approve racing reject across processes: applied at most once, and the outcomes agree with the stored state", async () => {
    if (cannotRun()) return;
    const name = runtimeName();
    const created = await first.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: 40 });
    const ids = created.map((outcome) => outcome.executionId);
    const startAt = Date.now() + 300;
    const [approvals, rejections] = await Promise.all([
      first.ask<Summary[]>({ op: "approveMany", name, executionIds: ids, startAt, spacingMs: 20 }),
      second.ask<boolean[]>({ op: "rejectMany", name, executionIds: ids, seq: 1, startAt, spacingMs: 20 }),
    ]);
    const effects = await backend.effects();
    const statuses = await second.ask<string[]>({ op: "status", name, executionIds: ids });
    const tally = { approved: 0, rejected: 0 };
    ids.forEach((executionId, index) => {
      const approval = approvals[index]!;
      const rejected = rejections[index]!;
      const applied = effects.get(`${executionId}:1`) ?? 0;
      if (approval.status === "completed") {
        expect(rejected, `${executionId} was approved, so the rejection came too late`).toBe(false);
        expect(statuses[index]).toBe("completed");
        expect(applied).toBe(1);
        tally.approved += 1;
      } else {
        expect(rejected, `${executionId}: approval lost (${JSON.stringify(approval)}), so the rejection won`).toBe(
          true,
        );
        expect(["NOT_PAUSED", "BUSY"]).toContain(approval.code);
        expect(statuses[index]).toBe("rejected");
        expect(applied).toBe(0);
        tally.rejected += 1;
      }
    });
    console.log(`${backend.label}: approve vs reject over ${ids.length} runs: ${JSON.stringify(tally)}`);
  }, 60_000);

  it("R-AP-6 R-AP-9 racing decisions across processes (approve in one, edit in the other): exactly one applies, with its own arguments", async () => {
    if (cannotRun()) return;
    const name = runtimeName();
    const created = await first.ask<Summary[]>({ op: "executeMany", name, code: readThenApply, count: 20 });
    const ids = created.map((outcome) => outcome.executionId);
    const startAt = Date.now() + 300;
    const [approvals, edits] = await Promise.all([
      first.ask<Summary[]>({
        op: "decideMany",
        name,
        executionIds: ids,
        decisions: [{ seq: 1, decision: "approve" }],
        startAt,
        spacingMs: 20,
      }),
      second.ask<Summary[]>({
        op: "decideMany",
        name,
        executionIds: ids,
        decisions: [{ seq: 1, decision: "edit", args: { item: "edited" } }],
        startAt,
        spacingMs: 20,
      }),
    ]);
    const effects = await backend.effects();
    const tally = { approve: 0, edit: 0 };
    for (const [index, executionId] of ids.entries()) {
      const pair = [approvals[index]!, edits[index]!];
      expect(
        pair.filter((outcome) => outcome.status === "completed"),
        JSON.stringify(pair),
      ).toHaveLength(1);
      const loser = pair.find((outcome) => outcome.status !== "completed")!;
      expect(["NOT_PAUSED", "BUSY"], JSON.stringify(loser)).toContain(loser.code);
      expect(effects.get(`${executionId}:1`), `applied count of ${executionId}`).toBe(1);
      const log = await second.ask<Array<{ seq: number; args: unknown; decision?: { decision?: string } }>>({
        op: "log",
        name,
        executionId,
        full: true,
      });
      const winner = approvals[index]!.status === "completed" ? "approve" : "edit";
      expect(log[1]).toMatchObject({
        args: { item: winner === "edit" ? "edited" : "item-0" },
        decision: { decision: winner },
      });
      tally[winner] += 1;
    }
    console.log(`${backend.label}: approve vs edit over ${ids.length} runs: ${JSON.stringify(tally)}`);
  }, 60_000);
}
