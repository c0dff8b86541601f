/**
 * The approval inbox handler on a run with several pending actions (R-AP-8): one card with a form
 * per action, a long list cut at 50, and Approve all — one decision for every seq the page showed,
 * refused whole when one is no longer pending. Over plain HTTP, no browser.
 */
import type { ExecutionState } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { decisionPoster, shopConnector, TWO_ORDERS, useInbox } from "./inbox-fixtures.ts";

const { serve } = useInbox();

const states = (execution: ExecutionState | null) => execution?.log.map((entry) => [entry.seq, entry.state]);

describe("the approval inbox handler", () => {
  it("R-AP-8: a run with two pending actions is one card: each action with its tool's description, its own form and an editor prefilled with its arguments and schema; one Approve all with both seqs", async () => {
    const served = await serve({ connectors: [shopConnector([])] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { page } = await decisionPoster(served, paused.executionId);
    expect(page.match(/<article class="card"/g)).toHaveLength(1);
    expect(page).toContain("2 actions waiting");
    for (const seq of [0, 1]) expect(page).toContain(`id="action-${paused.executionId}-${seq}"`);
    expect(page.match(/<p class="description">Places an order for a customer.<\/p>/g)).toHaveLength(2);
    expect(page).toContain('name="args"');
    expect(page).toContain("&quot;sku&quot;: &quot;teapot&quot;");
    expect(page).toContain('data-schema="{&quot;type&quot;:&quot;object&quot;');
    expect(page).toContain('name="seqs" value="0,1"');
    expect(page).toContain("Approve all 2 pending of this run");
  });

  it("R-AP-8: a run with 120 pending actions shows the first 50, each with its form, says how many more wait, and Approve covers the ones shown", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({
      code: "async () => Promise.all(Array.from({ length: 120 }, (_, n) => shop.order({ sku: 'pen-' + n, qty: 1 })))",
    });
    const { page, post } = await decisionPoster(served, paused.executionId);
    expect(page).toContain("120 actions waiting");
    expect(page.match(/<section class="action"/g)).toHaveLength(50);
    expect(page).toContain("70 more pending actions of this run");
    expect(page).toContain("Approve the 50 shown");
    const seqs = /name="seqs" value="([\d,]+)"/.exec(page)?.[1] ?? "";
    expect(seqs.split(",")).toHaveLength(50);
    const answer = await post({ seqs, decision: "approve" });
    expect(answer.answer).toMatchObject({ ok: true, status: "paused" });
    expect(ran).toHaveLength(50);
  });

  it("R-AP-8: Approve all approves every seq the page showed in one decision; a seq no longer pending (stale or forged) refuses the whole of it, and nothing else is approved", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { post } = await decisionPoster(served, paused.executionId);

    // A forged seq: refused, with what is pending now.
    const forged = await post({ seq: "7", decision: "approve" });
    expect(forged.status).toBe(409);
    expect(forged.answer).toMatchObject({ ok: false, stale: true, code: "NOT_PAUSED" });
    expect(forged.answer.message).toMatch(/seq 7 is not pending/);
    expect(await post({ seqs: "0,1,7", decision: "approve" })).toMatchObject({ status: 409 });

    // Someone approves seq 0 elsewhere; the page still shows both.
    await served.runtime.decide({
      executionId: paused.executionId,
      by: "sam",
      decisions: [{ seq: 0, decision: "approve" }],
    });
    expect(ran).toEqual([{ sku: "mug", qty: 1 }]);
    const stale = await post({ seqs: "0,1", decision: "approve" });
    expect(stale.status).toBe(409);
    expect(stale.answer.message).toMatch(
      new RegExp(
        `^Not approved: in ${paused.executionId.slice(0, 8)}, seq 0 \\(shop\\.order\\) was already approved by sam .* None of the 2 actions was decided\\.$`,
      ),
    );
    expect(ran).toHaveLength(1);
    expect(states(await served.runtime.execution(paused.executionId))).toEqual([
      [0, "applied"],
      [1, "pending"],
    ]);

    // A fresh page's Approve all (one action left) goes ahead.
    const all = await post({ seqs: "1", decision: "approve" });
    expect(all.answer).toMatchObject({ ok: true, status: "completed" });
    expect(ran).toEqual([
      { sku: "mug", qty: 1 },
      { sku: "teapot", qty: 2 },
    ]);
  });

  it("R-AP-8: Approve all of two pending actions is one decision that runs both", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { post } = await decisionPoster(served, paused.executionId);
    const all = await post({ seqs: "0,1", decision: "approve", reason: "both fine" });
    expect(all.answer).toMatchObject({
      ok: true,
      status: "completed",
      message: `Approved seqs 0, 1 of ${paused.executionId.slice(0, 8)}; the run completed.`,
    });
    expect(ran).toHaveLength(2);
    const log = (await served.runtime.execution(paused.executionId))?.log ?? [];
    expect(log.map((entry) => entry.decision?.reason)).toEqual(["both fine", "both fine"]);
  });
});
