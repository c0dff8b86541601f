/**
 * Issue 17.11: an approval prompt shows every key of the pending action. It used to cut the
 * arguments' JSON at 500 characters, so a long first value hid the rest: the human approved
 * `{"note":"xxxx…` without seeing `"amount":1000000` behind it. Now each value is cut instead.
 */
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { describePendingAction, pauseApprovalReason } from "@codemode/core/adapters";
import { describe, expect, it } from "vitest";

describe("approval prompts show every key (issue 17.11)", () => {
  it("R-AP-1: a long first value is cut; the keys after it and their values are shown", () => {
    const text = describePendingAction({
      connector: "bank",
      method: "transfer",
      args: { note: "x".repeat(10_000), amount: 1_000_000, to: "mallory" },
    });
    expect(text).toContain('"amount":1000000');
    expect(text).toContain('"to":"mallory"');
    expect(text).toContain("more characters]");
    expect(text.length).toBeLessThan(600);
  });

  it("R-AP-1: short values are kept whole and long ones share the rest of the room", () => {
    const text = describePendingAction(
      { connector: "a", method: "b", args: { first: "f".repeat(400), second: "s".repeat(400), id: 7 } },
      200,
    );
    expect(text).toMatch(
      /^a\.b\(\{"first":"f+… \[\d+ more characters\],"second":"s+… \[\d+ more characters\],"id":7\}\)$/,
    );
  });

  it("R-AP-1: every one of many keys is named, and a huge key name is cut", () => {
    const args = Object.fromEntries(Array.from({ length: 60 }, (_, index) => [`field${index}`, "v".repeat(100)]));
    args["k".repeat(5_000)] = "hidden?";
    const text = describePendingAction({ connector: "a", method: "b", args });
    for (let index = 0; index < 60; index++) expect(text).toContain(`"field${index}":`);
    expect(text).toContain('"hidden?"');
    expect(text.length).toBeLessThan(61 * 100);
  });

  it("R-AP-1: the reason a framework shows for a paused run names every key", async () => {
    const bank = defineConnector({
      name: "bank",
      tools: { transfer: { requiresApproval: true, execute: async () => "sent" } },
    });
    const runtime = createCodemodeRuntime({ connectors: [bank] });
    try {
      const outcome = await runtime.execute({
        code: "async () => bank.transfer({ memo: 'm'.repeat(20_000), amount: 1_000_000, to: 'mallory' })",
      });
      expect(outcome.status).toBe("paused");
      if (outcome.status === "paused") {
        const reason = pauseApprovalReason(outcome);
        expect(reason).toContain('"amount":1000000');
        expect(reason).toContain('"to":"mallory"');
      }
    } finally {
      await runtime.close();
    }
  });
});
