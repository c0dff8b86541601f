import type { LogEntry } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { INBOX_STYLES } from "./assets.js";
import { logTable } from "./log-table.js";

const LONG_METHOD = "create_refund_for_customer_order_after_manager_review";

const entry: LogEntry = {
  seq: 3,
  connector: "payments_eu_west",
  method: LONG_METHOD,
  args: { note: "x".repeat(500) },
  requiresApproval: true,
  state: "pending",
  startedAt: Date.now(),
};

/** The text a person reads in a cell: the markup without its tags. */
const cellText = (markup: string, cell: string) =>
  new RegExp(`<td class="${cell}">(.*?)</td>`, "s").exec(markup)?.[1]?.replace(/<[^>]+>/g, "") ?? "";

describe("the inbox's call log table", () => {
  it("shows a long connector.method in full, wrapping between its words (after a dot or an underscore), never inside one; the arguments may still be abbreviated", () => {
    const wrapped = `payments_<wbr>eu_<wbr>west.<wbr>${LONG_METHOD.split(/(?<=_)/).join("<wbr>")}`;
    for (const compact of [true, false]) {
      const markup = logTable([entry], compact).value;
      expect(cellText(markup, "call-name")).toBe(`payments_eu_west.${LONG_METHOD}`);
      expect(markup).toContain(`<td class="call-name"><code>${wrapped}</code></td>`);
    }
    expect(logTable([entry], true).value).toContain("…");
    // A word is broken only when it alone is wider than its column.
    expect(INBOX_STYLES.value).toMatch(/td\.call-name code[^{]*\{ overflow-wrap: break-word; \}/);
  });
});
