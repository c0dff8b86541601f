/**
 * The approval inbox handler's per-action decisions mapped onto runtime.decide (R-AP-9): approve
 * or deny one action, edit one (its grant approving the next calls, a value the schema refuses
 * changing nothing, invisible characters kept), and a denial that ends the run. Over plain HTTP,
 * no browser.
 */
import { describe, expect, it } from "vitest";
import { GATED_PROGRAM } from "./cli-fixtures/tickets.ts";
import { decisionPoster, shopConnector, TWO_ORDERS, useInbox } from "./inbox-fixtures.ts";

const { serve } = useInbox();

describe("the approval inbox handler", () => {
  it("R-AP-9: invisible characters in arguments reach the editor as JSON escapes, so an edit sent back unchanged keeps them", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: "async () => shop.order({ sku: 'pen\\u200cblue', qty: 1 })" });
    const { page, post } = await decisionPoster(served, paused.executionId);
    const editor = /<textarea class="args-editor"[^>]*>([^<]*)<\/textarea>/.exec(page)?.[1] ?? "";
    expect(editor).toContain("pen\\u200cblue");
    expect(editor).not.toContain("U+200C");
    const text = editor
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, "&");
    expect((await post({ seq: "0", decision: "edit", args: text })).answer).toMatchObject({
      ok: true,
      status: "completed",
    });
    expect(ran).toEqual([{ sku: "pen\u200cblue", qty: 1 }]);
  });

  it("R-AP-9: decides per action: approve one (the other stays pending, and the answer says so), then deny the other with a reason (the program catches ApprovalDenied)", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { post } = await decisionPoster(served, paused.executionId);
    const short = paused.executionId.slice(0, 8);

    const first = await post({ seq: "0", decision: "approve", reason: "regular customer" });
    expect(first.status).toBe(200);
    expect(first.answer).toMatchObject({
      ok: true,
      status: "paused",
      message: `Approved seq 0 of ${short}; still pending: seq 1 (shop.order).`,
      decided: [{ seq: 0, call: "shop.order", state: "applied" }],
      pending: [{ seq: 1, call: "shop.order" }],
    });
    expect(ran).toEqual([{ sku: "mug", qty: 1 }]);

    const second = await post({ seq: "1", decision: "deny", reason: "out of stock" });
    expect(second.answer).toMatchObject({
      ok: true,
      status: "completed",
      message: `Denied seq 1 of ${short}; the run completed.`,
      decided: [{ seq: 1, state: "denied" }],
    });
    expect(ran).toHaveLength(1);
    const execution = await served.runtime.execution(paused.executionId);
    expect(execution?.result).toEqual([{ sku: "mug", qty: 1 }, "ApprovalDenied"]);
    expect(execution?.log[1]?.decision).toMatchObject({
      approved: false,
      decision: "deny",
      by: "dana",
      reason: "out of stock",
    });

    // The audit trail shows the denial as such.
    const trail = await (
      await fetch(`${served.base}/executions/${paused.executionId}`, { headers: { cookie: served.cookie } })
    ).text();
    expect(trail).toContain('<span class="badge denied">denied</span>');
    expect(trail).toContain('<span class="decision rejected denied">denied</span>');
    expect(trail).toContain("“out of stock”");
  });

  it("R-AP-9: an edit runs the tool with the edited arguments and its grant approves the next calls; the trail shows asked vs ran and the grant", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({
      code: `async () => { const out = []; for (let n = 0; n < 3; n++) out.push(await shop.order({ sku: "mug", qty: 9 })); return out.length; }`,
    });
    const { post } = await decisionPoster(served, paused.executionId);
    const edited = await post({ seq: "0", decision: "edit", args: '{ "sku": "mug", "qty": 2 }', grant: "2" });
    expect(edited.status).toBe(200);
    expect(edited.answer).toMatchObject({ ok: true, status: "completed", decided: [{ seq: 0, state: "applied" }] });
    expect(edited.answer.message).toBe(
      `Edited seq 0 of ${paused.executionId.slice(0, 8)} (it ran with the edited arguments), with a grant: the next 2 calls of shop.order approved as they come; the run completed.`,
    );
    expect(ran).toEqual([
      { sku: "mug", qty: 2 },
      { sku: "mug", qty: 9 },
      { sku: "mug", qty: 9 },
    ]);
    const execution = await served.runtime.execution(paused.executionId);
    expect(execution?.log[0]).toMatchObject({ requestedArgs: { sku: "mug", qty: 9 }, args: { sku: "mug", qty: 2 } });
    const trail = await (
      await fetch(`${served.base}/executions/${paused.executionId}`, { headers: { cookie: served.cookie } })
    ).text();
    expect(trail).toMatch(
      /<div class="asked"><span class="args-label">asked<\/span> <pre class="value">\{\n {2}&quot;sku&quot;: &quot;mug&quot;,\n {2}&quot;qty&quot;: 9\n\}<\/pre>/,
    );
    expect(trail).toMatch(
      /<div class="ran"><span class="args-label">ran<\/span> <pre class="value">\{\n {2}&quot;sku&quot;: &quot;mug&quot;,\n {2}&quot;qty&quot;: 2\n\}<\/pre>/,
    );
    expect(trail).toContain('<span class="decision approved edited">edited</span>');
    expect(trail).toContain("granted the next 2 calls of this method");
    expect(trail.match(/through the grant of seq 0/g)).toHaveLength(2);
  });

  it("R-AP-9: an edit the tool's schema refuses changes nothing: the runtime's INVALID_DECISION message comes back (422) and nothing ran", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const before = await served.runtime.execution(paused.executionId);
    const { post } = await decisionPoster(served, paused.executionId);
    for (const [args, expected] of [
      [
        '{ "sku": "mug", "qty": 50 }',
        /seq 0 \(shop\.order\): Invalid arguments for shop\.order:\n- args\.qty: expected a number <= 10, got 50/,
      ],
      ['{ "sku": "mug", "qty": 1, "gift": true }', /gift/],
      ['{ "sku": "mug", "qty": 1, "__proto__": { "qty": 99 } }', /__proto__/],
    ] as const) {
      const refused = await post({ seq: "0", decision: "edit", args });
      expect(refused.status).toBe(422);
      expect(refused.answer).toMatchObject({ ok: false, code: "INVALID_DECISION" });
      expect(refused.answer.message).toMatch(/^Refused, nothing ran: /);
      expect(refused.answer.message).toMatch(expected);
    }
    expect(ran).toEqual([]);
    expect(await served.runtime.execution(paused.executionId)).toEqual(before);
  });

  it("R-AP-9: a denial the program does not catch ends the run rejected, and the answer says so (not taken for a stale click)", async () => {
    const served = await serve();
    const paused = await served.runtime.execute({ code: GATED_PROGRAM });
    const { post } = await decisionPoster(served, paused.executionId);
    const denied = await post({ seq: "1", decision: "deny", reason: "duplicate" });
    expect(denied.status).toBe(200);
    expect(denied.answer).toMatchObject({ ok: true, status: "rejected", decided: [{ seq: 1, state: "denied" }] });
    expect(denied.answer.message).toMatch(
      new RegExp(
        `^Denied seq 1 of ${paused.executionId.slice(0, 8)}; the run ended rejected: .*tickets\\.create\\(\\{.*\\}\\) was denied by dana: duplicate\\.$`,
      ),
    );
    expect((await served.runtime.execution(paused.executionId))?.status).toBe("rejected");
  });
});
