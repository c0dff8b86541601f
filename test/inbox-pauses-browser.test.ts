/**
 * A stale inbox page in Chromium decides nothing (R-AP-9): a page left open (its live updates
 * gone quiet) shows a call in its first pause; the host dies inside that call after it was
 * approved, and the run asks again. Approve on the old page is refused, the person is told why, the
 * page then shows the call as it is asked now, and that form decides it. The inbox is mounted in
 * this process (createApprovalInbox over a Keyv store the test edits as a dying host leaves it).
 * Needs /usr/bin/chromium (`apt-get install -y chromium`; .ci/run installs it).
 */
import { existsSync } from "node:fs";
import Keyv from "keyv";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN, useInbox } from "./inbox-fixtures.ts";
import { cardCharger, crashInside } from "./pause-fixtures.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const { serve } = useInbox();
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get update && apt-get install -y chromium (or set CHROMIUM_PATH)`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

describe("a stale inbox page in Chromium (R-AP-9)", () => {
  it("R-AP-9: Approve on a page that showed the call before it was asked again is refused and says why; the page then shows the new pause, whose Approve runs it", async () => {
    const { connector: payments, charged } = cardCharger();
    const keyv = new Keyv();
    // Live updates every 10 minutes: the page stays as it was drawn.
    const served = await serve({ connectors: [payments], storage: keyv, pollMs: 600_000 });
    const { runtime, base } = served;
    const first = await runtime.execute({
      code: `async () => [(await payments.charge({ card: "visa" })).charged, (await payments.charge({ card: "amex" })).charged]`,
      by: "the support bot",
    });
    const { executionId } = first;

    const page = await browser.newPage();
    try {
      // The page shows visa waiting, in its first pause.
      await page.goto(`${base}/?token=${TOKEN}`);
      const visa = page.locator(`#action-${executionId}-0`);
      await visa.waitFor();
      expect(await visa.locator('input[name="pause"]').getAttribute("value")).toBe("0.1");
      expect(await page.locator(`#run-${executionId} .who`).textContent()).toBe("the support bot");

      // Elsewhere: visa approved and charged; the host died inside that charge; amex approved; the
      // resumed run asks about visa again.
      await runtime.approve({ executionId, seq: 0, by: "ops" });
      expect(charged).toEqual(["visa"]);
      await crashInside(keyv, executionId, 0);
      const askedAgain = await runtime.approve({ executionId, seq: 1, by: "ops" });
      expect(askedAgain).toMatchObject({ status: "paused", pending: [{ seq: 0, pauseId: "0.2" }] });

      // The old page's Approve is for the pause visa has left: refused, and the person is told why.
      await visa.locator("button.approve").click();
      await expect
        .poll(() => page.locator("#notices .notice").first().textContent(), { timeout: 30_000 })
        .toBe(
          `Not approved: in ${executionId.slice(0, 8)}, seq 0 (payments.charge) was asked again after this page showed it: it was interrupted while it ran and may have taken effect. Decide it again as it is shown now.`,
        );
      expect(charged).toEqual(["visa"]);

      // Refreshed after the answer, the page shows visa as it is asked now, in pause 0.2.
      const asked = page.locator(`#action-${executionId}-0`);
      await asked.waitFor();
      expect(await asked.locator('input[name="pause"]').getAttribute("value")).toBe("0.2");
      await asked.locator("button.approve").click();
      await expect
        .poll(() => page.locator("#notices .notice.ok").first().textContent(), { timeout: 30_000 })
        .toMatch(/^Approved seq 0 of \w+; the run completed\.$/);
      expect(await runtime.outcome(executionId)).toMatchObject({ status: "completed", result: ["visa", "amex"] });
    } finally {
      await page.close();
    }
  });
});
