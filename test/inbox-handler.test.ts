/**
 * The approval inbox as a request handler an application mounts: the token on every request,
 * decisions only by same-origin POST with the form's value, stale decisions explained, the audit
 * trail, a base path. Over plain HTTP, no browser. Per-action decisions are in
 * inbox-handler-actions.test.ts and inbox-handler-decisions.test.ts, a fleet queue in
 * inbox-handler-queue.test.ts.
 */
import { describe, expect, it } from "vitest";
import { GATED_PROGRAM } from "./cli-fixtures/tickets.ts";
import { formToken, TOKEN, useInbox } from "./inbox-fixtures.ts";

const { serve } = useInbox();

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
});
