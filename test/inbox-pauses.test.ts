/**
 * The approval inbox and the pause each form answers (R-AP-9), over HTTP: a form names the pause
 * its action waits in, so a page that showed a call before it was asked again (a host died inside
 * it, `onInterrupted: "ask"`) decides nothing and says why; a run's card shows its program and
 * every name whole; "Deny all" denies every action the page showed, with the reason.
 */
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { decisionPoster, useInbox } from "./inbox-fixtures.ts";
import { cardCharger, crashInside } from "./pause-fixtures.ts";

const { serve } = useInbox();

const CHARGE_TWO = `async () => {
  const done = [];
  for (const card of ["visa", "amex"]) {
    try { done.push((await payments_eu.charge_card({ card })).charged); } catch (error) { done.push(error.name); }
  }
  return done;
}`;

describe("the inbox and the pause each form answers (R-AP-9)", () => {
  it("R-AP-9: a page that showed a call before it was asked again decides nothing and says why; the page then shows the new pause", async () => {
    const { connector, charged } = cardCharger("payments_eu", "charge_card");
    const keyv = new Keyv();
    const served = await serve({ connectors: [connector], storage: keyv });
    const { runtime } = served;
    const first = await runtime.execute({ code: CHARGE_TWO, by: "the support bot, for <ann>" });
    const { page, post } = await decisionPoster(served, first.executionId);
    // The card shows who asked, the program, and the call's name wraps between its words only.
    expect(page).toContain('asked by <span class="who">the support bot, for &lt;ann&gt;</span>');
    expect(page).toContain("The program · 7 lines");
    expect(page).toContain("for (const card of [&quot;visa&quot;, &quot;amex&quot;])");
    expect(page).toContain('<code class="call">payments_<wbr>eu.<wbr>charge_<wbr>card</code>');
    expect(page).toContain('<input type="hidden" name="pause" value="0.1">');

    // Approved from the page: visa is charged; the run waits at amex.
    expect((await post({ seq: "0", pause: "0.1", decision: "approve" })).answer).toMatchObject({ ok: true });
    expect(charged).toEqual(["visa"]);

    // The host dies inside visa's charge; when amex is approved, the resumed run asks about visa again.
    await crashInside(keyv, first.executionId, 0);
    const askedAgain = await runtime.approve({ executionId: first.executionId, seq: 1 });
    expect(askedAgain).toMatchObject({ status: "paused", pending: [{ seq: 0, pauseId: "0.2" }] });

    // The old page's form, sent again: refused, nothing charged, and the person is told why.
    const stale = await post({ seq: "0", pause: "0.1", decision: "approve" });
    expect(stale.answer).toMatchObject({ ok: false, code: "NOT_PAUSED", stale: true });
    expect(stale.answer.message).toBe(
      `Not approved: in ${first.executionId.slice(0, 8)}, seq 0 (payments_eu.charge_card) was asked again after this page showed it: it was interrupted while it ran and may have taken effect. Decide it again as it is shown now.`,
    );
    expect(charged).toEqual(["visa"]);

    // The page now shows the new pause; its form decides it.
    const fresh = await decisionPoster(served, first.executionId);
    expect(fresh.page).toContain('<input type="hidden" name="pause" value="0.2">');
    expect(
      (await fresh.post({ seq: "0", pause: "0.2", decision: "deny", reason: "charged already" })).answer,
    ).toMatchObject({ ok: true });
    expect(await runtime.outcome(first.executionId)).toMatchObject({
      status: "completed",
      result: ["ApprovalDenied", "amex"],
    });
    expect(charged).toEqual(["visa", "amex"]);
  });

  it("R-AP-8 R-AP-9: Deny all denies every action the page showed, each for the pause shown, with the reason", async () => {
    const { connector, charged } = cardCharger("payments_eu", "charge_card");
    const served = await serve({ connectors: [connector] });
    const both = await served.runtime.execute({
      code: `async () => (await Promise.allSettled([payments_eu.charge_card({ card: "a" }), payments_eu.charge_card({ card: "b" })])).map((each) => each.status === "fulfilled" ? each.value.charged : each.reason.message)`,
    });
    const { page, post } = await decisionPoster(served, both.executionId);
    expect(page).toContain('<input type="hidden" name="pauses" value="0.1,1.1">');
    expect(page).toContain('<button class="deny-all" name="decision" value="deny"');
    const answer = await post({ seqs: "0,1", pauses: "0.1,1.1", decision: "deny", reason: "not this month" });
    expect(answer.answer).toMatchObject({ ok: true });
    expect(charged).toEqual([]);
    expect(await served.runtime.outcome(both.executionId)).toMatchObject({
      status: "completed",
      result: [
        'payments_eu.charge_card({"card":"a"}) was denied by dana: not this month',
        'payments_eu.charge_card({"card":"b"}) was denied by dana: not this month',
      ],
    });
  });
});
