import { EventEmitter } from "node:events";
import type { CodemodeQueue } from "@codemode/bullmq";
import type { InboxQueue } from "@codemode/cli/inbox";
import type { ExecutionState } from "@codemode/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import { GATED_PROGRAM } from "./cli-fixtures/tickets.ts";
import { decisionPoster, formToken, shopConnector, TOKEN, useInbox } from "./inbox-fixtures.ts";

/**
 * The approval inbox as a request handler an application mounts: the token on every request,
 * decisions only by same-origin POST with the form's value, per-action decisions (approve, deny,
 * edit, grant, approve all of a run) mapped onto runtime.decide, stale decisions explained, and
 * live updates from a fleet queue's lifecycle events. Over plain HTTP, no browser.
 */

const { serve, inbox } = useInbox();

/** Two orders at once: the run pauses with both pending (R-AP-8); a denied one is caught. */
const TWO_ORDERS = `async () => {
  const settled = await Promise.allSettled([shop.order({ sku: "mug", qty: 1 }), shop.order({ sku: "teapot", qty: 2 })]);
  return settled.map((each) => each.status === "fulfilled" ? each.value.ordered : each.reason.name);
}`;

const states = (execution: ExecutionState | null) => execution?.log.map((entry) => [entry.seq, entry.state]);

describe("the approval inbox handler", () => {
  it("needs the token on every request: the link's token becomes a same-site cookie and leaves the address", async () => {
    const { base, cookie, login } = await serve();
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe("/");
    expect(login.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
    for (const path of ["/", "/events", "/executions/x"]) expect((await fetch(`${base}${path}`)).status).toBe(401);
    expect((await fetch(`${base}/?token=wrong-token-0000000000`, { redirect: "manual" })).status).toBe(401);
    expect((await fetch(`${base}/`, { headers: { cookie: `${cookie}x` } })).status).toBe(401);
    const page = await fetch(`${base}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect((await fetch(`${base}/`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("lists a paused run with its call and arguments; approves it by same-origin POST, and explains a second, stale approval", async () => {
    const { runtime, base, origin, cookie } = await serve();
    const paused = await runtime.execute({ code: GATED_PROGRAM });
    const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
    expect(page).toContain(`id="run-${paused.executionId}"`);
    expect(page).toContain("tickets.create");
    expect(page).toContain("&quot;title&quot;: &quot;Refund alice@example.com&quot;");
    expect(page).not.toContain(TOKEN);

    const decideUrl = `${base}/executions/${paused.executionId}/decide`;
    const form = (fields: Record<string, string>) =>
      new URLSearchParams({ csrf: formToken(page), seq: "1", decision: "approve", ...fields });
    const post = (headers: Record<string, string>, body = form({})) =>
      fetch(decideUrl, {
        method: "POST",
        redirect: "manual",
        headers: {
          cookie,
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
          ...headers,
        },
        body,
      });

    expect((await fetch(decideUrl, { headers: { cookie } })).status).toBe(405);
    expect((await post({ origin: "http://evil.example" })).status).toBe(403);
    expect((await post({ origin: "http://127.0.0.1:1" })).status).toBe(403);
    expect((await post({ "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await post({ "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await post({ origin }, form({ csrf: "guessed" }))).status).toBe(403);
    expect((await post({ origin }, form({ csrf: TOKEN }))).status).toBe(403);
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");

    const approved = await post(
      { origin, "sec-fetch-site": "same-origin" },
      form({ by: "dana", reason: "customer called" }),
    );
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({
      ok: true,
      status: "completed",
      message: `Approved seq 1 of ${paused.executionId.slice(0, 8)}; the run completed.`,
    });
    expect((await runtime.execution(paused.executionId))?.log[1]?.decision).toMatchObject({
      approved: true,
      by: "dana",
      reason: "customer called",
    });

    const stale = await post({ origin }, form({ by: "sam" }));
    expect(stale.status).toBe(409);
    const answer = (await stale.json()) as { stale: boolean; message: string; decision: { by: string } };
    expect(answer).toMatchObject({ stale: true, decision: { by: "dana" } });
    expect(answer.message).toMatch(
      /^Not approved: in [0-9a-f]{8}, seq 1 \(tickets\.create\) was already approved by dana at \d\d:\d\d:\d\d \(just now\) \("customer called"\); the run is now completed\.$/,
    );

    // Without the page's script, a form post lands back on the inbox with the notice.
    const plain = await post({ origin, accept: "text/html" }, form({ decision: "reject" }));
    expect(plain.status).toBe(303);
    expect(new URL(plain.headers.get("location") ?? "", base).searchParams.get("notice")).toMatch(
      /^Not rejected: .* was already approved by dana/,
    );
  });

  it("the audit trail of a run shows who decided, when and why", async () => {
    const { runtime, base, cookie } = await serve();
    const paused = await runtime.execute({ code: GATED_PROGRAM });
    await runtime.reject({ executionId: paused.executionId, seq: 1, by: "sam", reason: "duplicate <script>" });
    const trail = await fetch(`${base}/executions/${paused.executionId}`, { headers: { cookie } });
    const text = await trail.text();
    expect(text).toContain('data-status="rejected"');
    expect(text).toContain("<strong>sam</strong>");
    expect(text).toContain("“duplicate &lt;script&gt;”");
    expect((await fetch(`${base}/executions/no-such-run`, { headers: { cookie } })).status).toBe(404);
  });

  it("mounted under a base path: links, cookie path and routes follow it", async () => {
    const { runtime, base, cookie, login } = await serve({ basePath: "/inbox" });
    expect(login.headers.get("location")).toBe("/inbox/");
    expect(login.headers.get("set-cookie")).toContain("Path=/inbox;");
    const paused = await runtime.execute({ code: GATED_PROGRAM });
    const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
    expect(page).toContain(`action="/inbox/executions/${paused.executionId}/decide"`);
    expect(page).toContain('data-base="/inbox"');
  });

  it("with a fleet queue: approvals go to the queue, and its lifecycle events reach open pages at once", async () => {
    const events = new EventEmitter();
    const approvals: unknown[] = [];
    const queue: InboxQueue = {
      approve: async (input) => {
        approvals.push(input);
        return { executionId: input.executionId, seq: input.seq ?? 0 };
      },
      reject: async () => false,
      events,
    };
    // The bullmq queue has this shape.
    expectTypeOf<CodemodeQueue>().toExtend<InboxQueue>();
    const { runtime, base, origin, cookie } = await serve({ queue, pollMs: 600_000 });
    const paused = await runtime.execute({ code: GATED_PROGRAM });
    const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();

    const controller = new AbortController();
    const stream = await fetch(`${base}/events`, { headers: { cookie }, signal: controller.signal });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reader = stream.body!.getReader();
    const received: string[] = [];
    const waitFor = async (text: string) => {
      while (!received.join("").includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error("the event stream ended");
        received.push(new TextDecoder().decode(value));
      }
    };
    await waitFor("retry:");
    events.emit("completed", { executionId: paused.executionId });
    await waitFor("event: changed");

    const queued = await fetch(`${base}/executions/${paused.executionId}/decide`, {
      method: "POST",
      headers: { cookie, origin, accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: formToken(page), seq: "1", decision: "approve", by: "dana" }),
    });
    expect(await queued.json()).toMatchObject({
      ok: true,
      message: `Approved seq 1 of ${paused.executionId.slice(0, 8)}; a worker resumes the run.`,
    });
    expect(approvals).toEqual([{ executionId: paused.executionId, seq: 1, by: "dana" }]);
    // The queue decides; the runtime here ran nothing.
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    controller.abort();
    await inbox()!.close();
    expect(events.listenerCount("completed")).toBe(0);
  });
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

  it("R-AP-9: with a fleet queue, a plain approval goes to the queue; an edit (which the queue cannot carry) is decided by the runtime here", async () => {
    const approvals: unknown[] = [];
    const queue: InboxQueue = {
      approve: async (input) => {
        approvals.push(input);
        return { executionId: input.executionId, seq: input.seq ?? 0 };
      },
      reject: async () => false,
      events: new EventEmitter(),
    };
    const ran: unknown[] = [];
    const served = await serve({ queue, pollMs: 600_000, connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { post } = await decisionPoster(served, paused.executionId);
    expect((await post({ seq: "0", decision: "approve" })).answer).toMatchObject({ ok: true, status: "running" });
    expect(approvals).toEqual([{ executionId: paused.executionId, seq: 0, by: "dana" }]);
    const edited = await post({ seq: "1", decision: "edit", args: '{"sku":"teapot","qty":1}' });
    expect(edited.answer).toMatchObject({ ok: true, status: "paused", pending: [{ seq: 0 }] });
    expect(ran).toEqual([{ sku: "teapot", qty: 1 }]);
  });
});
