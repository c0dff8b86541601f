/**
 * The approval inbox end to end: `codemode inbox` (the built bin, a child process) over a SQLite
 * file, driven in headless Chromium. A person opens the printed link, sees the paused runs,
 * approves one and sees it complete; a run decided from another page is explained on a page that
 * had not caught up; a long connector.method in a card's log wraps whole. Saves
 * examples/approval-inbox/screenshot.png. Editing an action is in inbox-browser-edit.test.ts,
 * refused requests in inbox-browser-hardening.test.ts. Needs `npm run build` and /usr/bin/chromium
 * (`apt-get install -y chromium`; .ci/run installs it).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { INBOX_STYLES } from "../packages/cli/src/inbox/assets.ts";
import { logTable } from "../packages/cli/src/inbox/log-table.ts";
import { FREE_PROGRAM, GATED_PROGRAM } from "./cli-fixtures/tickets.ts";
import { address, browser, card, runtime, TIMEOUT, useBrowserInbox } from "./inbox-browser-fixtures.ts";

const SCREENSHOT = fileURLToPath(new URL("../examples/approval-inbox/screenshot.png", import.meta.url));

useBrowserInbox();

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
});
