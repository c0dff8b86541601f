/**
 * The approval inbox's edit form in headless Chromium (R-AP-8, R-AP-9): two pending actions of one
 * run decided one by one, one of them edited through the form that checks the tool's schema as the
 * person types (and whose check leaves a backtracking pattern to the runtime). Saves
 * examples/approval-inbox/screenshot-edit.png. Needs `npm run build` and /usr/bin/chromium
 * (`apt-get install -y chromium`; .ci/run installs it).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SCHEMA_CHECK_SOURCE } from "../packages/cli/src/inbox/schema-check.ts";
import { address, browser, card, runtime, TIMEOUT, useBrowserInbox } from "./inbox-browser-fixtures.ts";

const SCREENSHOT_EDIT = fileURLToPath(new URL("../examples/approval-inbox/screenshot-edit.png", import.meta.url));

useBrowserInbox();

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
});
