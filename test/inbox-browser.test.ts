import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CodemodeRuntime } from "@codemode/core";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INBOX_STYLES } from "../packages/cli/src/inbox/assets.ts";
import { logTable } from "../packages/cli/src/inbox/log-table.ts";
import { SCHEMA_CHECK_SOURCE } from "../packages/cli/src/inbox/schema-check.ts";
import { FREE_PROGRAM, GATED_PROGRAM, openTicketsRuntime } from "./cli-fixtures/tickets.ts";
import { serveHtml, startInbox, stopInbox } from "./inbox-browser-fixtures.ts";

/**
 * The approval inbox end to end: `codemode inbox` (the built bin, a child process) over a SQLite
 * file, driven in headless Chromium. A person opens the printed link, sees the paused runs,
 * approves one and sees it complete; a run decided from another page is explained on a page that
 * had not caught up; two actions of one run decided one by one, one of them edited through the
 * form that checks the tool's schema as the person types; requests without the token and
 * cross-site posts are refused. Saves examples/approval-inbox/screenshot.png and
 * screenshot-edit.png. Needs `npm run build` and /usr/bin/chromium
 * (`apt-get install -y chromium`; .ci/run installs it).
 */

const BIN = fileURLToPath(new URL("../packages/cli/dist/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./cli-fixtures/codemode.config.ts", import.meta.url));
const SCREENSHOT = fileURLToPath(new URL("../examples/approval-inbox/screenshot.png", import.meta.url));
const SCREENSHOT_EDIT = fileURLToPath(new URL("../examples/approval-inbox/screenshot-edit.png", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const TIMEOUT = 180_000;

const directory = mkdtempSync(join(tmpdir(), "codemode-inbox-"));
const store = `sqlite:${join(directory, "runs.sqlite")}`;
let runtime: CodemodeRuntime;
let closeRuntime: () => Promise<void>;
let inbox: ChildProcessWithoutNullStreams;
let address: { url: string; token: string; port: number };
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get update && apt-get install -y chromium (or set CHROMIUM_PATH)`);
  ({ runtime, close: closeRuntime } = openTicketsRuntime(store, "inbox"));
  ({ child: inbox, address } = await startInbox(
    BIN,
    ["--config", CONFIG, "inbox", "--port", "0", "--poll", "300ms", "--operator", "ops", "--json"],
    { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: "inbox" },
  ));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}, TIMEOUT);

afterAll(async () => {
  await browser?.close();
  if (inbox) await stopInbox(inbox);
  await closeRuntime?.();
  rmSync(directory, { recursive: true, force: true });
}, TIMEOUT);

const card = (page: Page, executionId: string) => page.locator(`#run-${executionId}`);

/** Opens two tickets at once: the run pauses with both pending (R-AP-8). */
const TWO_TICKETS = `async () => {
  const opened = await Promise.all([
    tickets.create({ title: "Refund order 1042", priority: "high" }),
    tickets.create({ title: "Call the customer", priority: "low" }),
  ]);
  return opened.map((ticket) => ticket.title);
}`;

describe("the approval inbox in a browser", () => {
  it(
    "open the link, see the paused runs, approve one and see it complete; a run decided elsewhere is explained, not silently lost",
    async () => {
      await runtime.execute({ code: FREE_PROGRAM });
      const first = (await runtime.execute({ code: GATED_PROGRAM })).executionId;
      const second = (await runtime.execute({ code: GATED_PROGRAM })).executionId;

      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(address.url);
      // The token was swapped for a cookie and left the address bar.
      expect(page.url()).toBe(`http://127.0.0.1:${address.port}/`);
      await expect.poll(() => page.locator("#live").textContent(), { timeout: 30_000 }).toBe("live");
      await expect.poll(() => page.locator(".card").count()).toBe(2);
      const firstCard = card(page, first);
      expect(await firstCard.locator(".call").textContent()).toBe("tickets.create");
      expect(await firstCard.locator("pre.args").textContent()).toBe(
        JSON.stringify({ title: "Refund alice@example.com", priority: "high" }, null, 2),
      );
      expect(await firstCard.locator("table.log tr.entry").count()).toBe(2);
      expect(await firstCard.locator(".meta time").textContent()).toMatch(/ago|just now/);

      // Approve with a reason: the notice says it completed, the card goes, the run shows completed.
      await firstCard.locator("input.reason").fill("customer called");
      await firstCard.locator("button.approve").click();
      await expect
        .poll(() => page.locator("#notices .notice.ok").first().textContent(), { timeout: 60_000 })
        .toBe(`Approved seq 1 of ${first.slice(0, 8)}; the run completed.`);
      await expect.poll(() => card(page, first).count()).toBe(0);
      await expect.poll(() => page.locator(`tr[data-execution="${first}"] .badge`).textContent()).toBe("completed");
      expect((await runtime.execution(first))?.log[1]?.decision).toMatchObject({
        approved: true,
        by: "ops",
        reason: "customer called",
      });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // A second page whose live updates have not arrived (its event stream is cut) still shows `second`.
      const stalePage = await context.newPage();
      await stalePage.route("**/events", (route) => route.abort());
      await stalePage.goto(`http://127.0.0.1:${address.port}/`);
      await expect.poll(() => card(stalePage, second).count()).toBe(1);

      // Someone else denies it from a third page (uncaught, the denial ends the run rejected); the live page drops the card by itself.
      const otherPage = await context.newPage();
      await otherPage.goto(`http://127.0.0.1:${address.port}/executions/${second}`);
      await otherPage.locator("#operator").fill("sam");
      await otherPage.locator("#operator").dispatchEvent("change");
      await card(otherPage, second).locator("input.reason").fill("duplicate");
      await card(otherPage, second).locator("button.deny").click();
      await expect
        .poll(() => otherPage.locator(".execution-title .badge").textContent(), { timeout: 60_000 })
        .toBe("rejected");
      await expect.poll(() => card(page, second).count(), { timeout: 30_000 }).toBe(0);

      // The stale page's click says who decided, and when.
      await card(stalePage, second).locator("button.approve").click();
      await expect
        .poll(() => stalePage.locator("#notices .notice.warn").first().textContent(), { timeout: 60_000 })
        .toMatch(
          new RegExp(
            `^Not approved: in ${second.slice(0, 8)}, seq 1 \\(tickets\\.create\\) was already denied by sam at \\d\\d:\\d\\d:\\d\\d \\((just now|\\d+ s ago)\\) \\("duplicate"\\); the run is now rejected\\.$`,
          ),
        );
      expect((await runtime.execution(second))?.status).toBe("rejected");

      // The audit trail shows both decisions' authors.
      await page.goto(`http://127.0.0.1:${address.port}/executions/${second}`);
      expect(await page.locator("table.log .decision.rejected").count()).toBe(1);
      expect(await page.locator("table.log strong").textContent()).toBe("sam");
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "R-AP-8 R-AP-9: two pending actions of one run: approve one; edit the other, which the page checks against the tool's schema (a bad value is shown and not sent), then a good value runs",
    async () => {
      const executionId = (await runtime.execute({ code: TWO_TICKETS })).executionId;
      const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
      const page = await context.newPage();
      const posts: string[] = [];
      page.on("request", (request) => {
        if (request.method() === "POST") posts.push(request.postData() ?? "");
      });
      await page.goto(address.url);
      await expect.poll(() => page.locator("#live").textContent(), { timeout: 30_000 }).toBe("live");
      const run = card(page, executionId);
      const action = (seq: number) => page.locator(`#action-${executionId}-${seq}`);
      await expect.poll(() => run.locator("section.action").count()).toBe(2);
      expect(await action(1).locator(".description").textContent()).toBe("Open a ticket.");
      expect(await run.locator("button.approve-all").textContent()).toBe("Approve all 2 pending of this run");

      // Edit the second: the editor holds its arguments; a value the schema refuses is shown, and sending is off.
      await action(1).locator("details.edit summary").click();
      const editor = action(1).locator("textarea.args-editor");
      expect(JSON.parse(await editor.inputValue())).toEqual({ title: "Call the customer", priority: "low" });
      const send = action(1).locator("button.edit");
      const problems = action(1).locator("ul.schema-problems li");
      await editor.fill('{ "title": "Call');
      await expect.poll(() => problems.first().textContent()).toMatch(/^Not JSON: /);
      expect(await send.isDisabled()).toBe(true);
      await editor.fill('{ "priority": 3 }');
      await expect.poll(() => problems.allTextContents()).toEqual(["title is required", "priority must be a string"]);
      expect(await send.isDisabled()).toBe(true);
      expect(await editor.getAttribute("aria-invalid")).toBe("true");
      await action(1).locator("input.reason").fill("shorter title");
      await run.screenshot({ path: SCREENSHOT_EDIT });
      await send.click({ force: true });
      expect(posts).toHaveLength(0);

      // Approve the first meanwhile: it runs, the other stays pending, and the refreshed page keeps the edit under way.
      await action(0).locator("button.approve").click();
      await expect
        .poll(() => page.locator("#notices .notice.ok").first().textContent(), { timeout: 60_000 })
        .toBe(`Approved seq 0 of ${executionId.slice(0, 8)}; still pending: seq 1 (tickets.create).`);
      await expect.poll(() => run.locator("section.action").count()).toBe(1);
      expect(await editor.inputValue()).toBe('{ "priority": 3 }');
      expect(await action(1).locator("input.reason").inputValue()).toBe("shorter title");
      expect(await problems.allTextContents()).toEqual(["title is required", "priority must be a string"]);
      expect(posts).toHaveLength(1);
      expect((await runtime.execution(executionId))?.log[1]?.state).toBe("pending");

      // The server checks again: with the page's check out of the way, the runtime's refusal is shown.
      // (Kept out of the way across the page's live refreshes, which draw the card, schema included, anew.)
      await page.evaluate(`(() => {
        const drop = () => {
          for (const element of document.querySelectorAll("textarea.args-editor[data-schema]")) {
            element.removeAttribute("data-schema");
            element.dispatchEvent(new Event("input", { bubbles: true }));
          }
        };
        drop();
        new MutationObserver(drop).observe(document.querySelector("main"), { subtree: true, childList: true });
      })()`);
      await editor.fill('{ "title": 5 }');
      await expect.poll(() => send.isDisabled()).toBe(false);
      await send.click();
      await expect
        .poll(() => page.locator("#notices .notice.error").first().textContent(), { timeout: 60_000 })
        .toMatch(/^Refused, nothing ran: seq 1 \(tickets\.create\): .*title/s);
      expect((await runtime.execution(executionId))?.log[1]?.state).toBe("pending");

      // A value that fits: sent, run with the edited arguments, and the run completes.
      await editor.fill('{ "title": "Call the customer back", "priority": "high" }');
      await expect.poll(() => problems.count()).toBe(0);
      await send.click();
      await expect
        .poll(() => page.locator("#notices .notice.ok").first().textContent(), { timeout: 60_000 })
        .toBe(`Edited seq 1 of ${executionId.slice(0, 8)} (it ran with the edited arguments); the run completed.`);
      const done = await runtime.execution(executionId);
      expect(done?.result).toEqual(["Refund order 1042", "Call the customer back"]);
      expect(done?.log[1]).toMatchObject({
        state: "applied",
        requestedArgs: { title: "Call the customer", priority: "low" },
        args: { title: "Call the customer back", priority: "high" },
        result: { id: 101, title: "Call the customer back" },
        decision: { decision: "edit", by: "ops", reason: "shorter title" },
      });
      expect(posts.map((body) => new URLSearchParams(body).get("decision"))).toEqual(["approve", "edit", "edit"]);

      // The audit trail shows what was asked and what ran.
      await page.goto(`http://127.0.0.1:${address.port}/executions/${executionId}`);
      expect(await page.locator("table.log .decision.edited").count()).toBe(1);
      expect(await page.locator("table.log .asked pre").textContent()).toContain('"title": "Call the customer"');
      expect(await page.locator("table.log .ran pre").textContent()).toContain('"title": "Call the customer back"');
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "a long connector.method in a card's call log is shown whole: it wraps inside its column, not cut or spilling into the next",
    async () => {
      const name = "payments_eu_west.create_refund_for_customer_order_after_manager_review";
      const [connector = "", method = ""] = name.split(".");
      const log = [
        {
          seq: 1,
          connector,
          method,
          args: { note: "x".repeat(400) },
          requiresApproval: true,
          state: "pending" as const,
          startedAt: Date.now(),
        },
      ];
      const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      await page.setContent(
        `<style>${INBOX_STYLES.value}</style><main><article class="card"><details class="so-far" open><summary>log</summary>${logTable(log, true).value}</details></article></main>`,
      );
      const cell = page.locator("td.call-name");
      expect(await cell.textContent()).toBe(name);
      const overflow = await cell.evaluate((td) => {
        const right = td.getBoundingClientRect().right;
        const lines = [...(td.querySelector("code")?.getClientRects() ?? [])];
        return { lines: lines.length, beyond: Math.max(...lines.map((line) => line.right)) - right };
      });
      expect(overflow.lines).toBeGreaterThan(1);
      expect(overflow.beyond).toBeLessThanOrEqual(0);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "the page's schema check in Chromium leaves a backtracking pattern to the runtime: 100,000 characters against ^(a+)+$ do not freeze the page",
    async () => {
      const page = await browser.newPage();
      await page.setContent(`<script>${SCHEMA_CHECK_SOURCE}</script>`);
      const checked = await page.evaluate(() => {
        const check = (globalThis as unknown as { schemaProblems(value: unknown, schema: unknown): string[] })
          .schemaProblems;
        // Matched by the page's engine, this would not end: the evaluate would never answer.
        const hostile = check({ title: `${"a".repeat(100_000)}!` }, { properties: { title: { pattern: "^(a+)+$" } } });
        return { hostile, safe: check({ sku: "Mug" }, { properties: { sku: { pattern: "^[a-z]+$" } } }) };
      });
      expect(checked.hostile).toEqual([]);
      expect(checked.safe).toEqual(["sku must match the pattern ^[a-z]+$"]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "refuses a request without the token, and a cross-site POST even with the form's value",
    async () => {
      const target = (await runtime.execute({ code: GATED_PROGRAM })).executionId;
      const inboxOrigin = `http://127.0.0.1:${address.port}`;

      // No token: nothing but the refusal, in a browser and from a script.
      const stranger = await browser.newContext();
      const strangerPage = await stranger.newPage();
      const refused = await strangerPage.goto(`${inboxOrigin}/`);
      expect(refused?.status()).toBe(401);
      expect(await strangerPage.textContent("body")).toContain("This inbox needs its token");
      expect((await fetch(`${inboxOrigin}/executions/${target}`)).status).toBe(401);
      await stranger.close();

      // A person who holds the cookie visits another local site (same host, another port: same-site,
      // so the SameSite cookie goes along) whose page posts a decision — with the real form value.
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(address.url);
      const csrf = await card(page, target).locator('input[name="csrf"]').inputValue();
      const evil = await serveHtml(`<form id="f" method="post" action="${inboxOrigin}/executions/${target}/decide">
        <input name="csrf" value="${csrf}"><input name="seq" value="1"><input name="decision" value="approve"><input name="by" value="mallory">
      </form><script>document.getElementById("f").submit()</script>`);
      try {
        const [response] = await Promise.all([
          page.waitForResponse((candidate) => candidate.url().includes("/decide")),
          page.goto(evil.url),
        ]);
        expect(response.status()).toBe(403);
        expect(await response.text()).toContain(`cross-site request from http://127.0.0.1:${evil.port} refused`);
      } finally {
        await evil.close();
      }
      expect((await runtime.execution(target))?.status).toBe("paused");
      await context.close();
    },
    TIMEOUT,
  );
});

describe("hardening: the inbox against other local pages (round two)", () => {
  it(
    "finding 7: a page on another port of 127.0.0.1 frames the inbox's ?fragment=1 (its Approve forms): the browser refuses to show it, and a click approves nothing",
    async () => {
      const paused = await runtime.execute({ code: GATED_PROGRAM });
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(address.url);
      const inboxOrigin = new URL(address.url).origin;
      const framing = await serveHtml(`<p>Win a prize: click the button!</p>
        <iframe id="f" src="${inboxOrigin}/?fragment=1" style="width:800px;height:600px;opacity:0.01;position:absolute;top:0;left:0"></iframe>`);
      try {
        const [response] = await Promise.all([
          page.waitForResponse((candidate) => candidate.url().includes("fragment=1")),
          page.goto(framing.url),
        ]);
        // The response itself forbids framing, as every inbox response does…
        expect(response.headers()["x-frame-options"]).toBe("DENY");
        expect(response.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
        // …so the frame holds no form: the browser blocked it.
        const frame = page.frames().find((candidate) => candidate.url().includes("fragment=1"));
        const buttons = frame
          ? await frame
              .locator("button")
              .count()
              .catch(() => 0)
          : 0;
        expect(buttons).toBe(0);
        await page.mouse.click(200, 200);
      } finally {
        await framing.close();
      }
      expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "finding 8: the cookie holds a session id, never the token; another local server that receives it learns nothing that opens the inbox by itself",
    async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(address.url);
      const cookies = await context.cookies();
      expect(cookies).toHaveLength(1);
      const [cookie] = cookies;
      expect(cookie!.value).not.toContain(address.token);
      expect(cookie!.value.length).toBeGreaterThanOrEqual(40);
      expect(cookie!.httpOnly).toBe(true);
      // Another server on the same host (cookies ignore ports) receives the cookie: the token stays unknown to it.
      let received = "";
      const other = await serveHtml("<p>another local app</p>", (request) => {
        received = request.headers.cookie ?? "";
      });
      try {
        await page.goto(other.url);
        expect(received).toContain(cookie!.name);
        expect(received).not.toContain(address.token);
        // What it received is no bearer token, and the page's HTML never echoes the token either.
        const inboxOrigin = new URL(address.url).origin;
        const value = decodeURIComponent(received.split("=").slice(1).join("="));
        expect((await fetch(`${inboxOrigin}/`, { headers: { authorization: `Bearer ${value}` } })).status).toBe(401);
        await page.goto(`${inboxOrigin}/`);
        expect(await page.content()).not.toContain(address.token);
      } finally {
        await other.close();
      }
      await context.close();
    },
    TIMEOUT,
  );
});
