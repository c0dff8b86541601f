import type { RerunReport, RerunResult } from "@codemode/core/operations";
import { describe, expect, it } from "vitest";
import { EXIT_CODES } from "../exit-codes.js";
import { rerunExitCode, rerunLine, rerunQuery } from "./surgery.js";

const failed = { code: "STORAGE_ERROR" as const, error: "the store failed to write execution run-1" };
const completed = (id: string): RerunResult => ({
  executionId: id,
  failed,
  action: "rerun",
  outcome: { status: "completed", executionId: id, result: 1 },
});
const skipped = (id: string, code: "BUSY" | "STORAGE_ERROR" | "MISSING_CONNECTOR"): RerunResult => ({
  executionId: id,
  failed,
  action: "skipped",
  reason: { code, message: `${code} for ${id}` },
});
const report = (...results: RerunResult[]): RerunReport => ({ dryRun: false, results });

describe("rerun's exit code: the worst thing that happened to a run", () => {
  it("store 7 over failed-again 1 over busy 5 over could-not-run 4; all ended well (or nothing to do) is 0", () => {
    const again: RerunResult = {
      executionId: "b",
      failed,
      action: "rerun",
      outcome: { status: "error", executionId: "b", code: "SANDBOX_ERROR", error: "boom" },
    };
    expect(rerunExitCode(report())).toBe(EXIT_CODES.ok);
    expect(rerunExitCode(report(completed("a")))).toBe(EXIT_CODES.ok);
    expect(rerunExitCode(report(completed("a"), skipped("c", "MISSING_CONNECTOR")))).toBe(EXIT_CODES.conflict);
    expect(rerunExitCode(report(skipped("c", "MISSING_CONNECTOR"), skipped("d", "BUSY")))).toBe(EXIT_CODES.busy);
    expect(rerunExitCode(report(skipped("d", "BUSY"), again))).toBe(EXIT_CODES.runFailed);
    expect(rerunExitCode(report(again, skipped("e", "STORAGE_ERROR")))).toBe(EXIT_CODES.store);
  });

  it("a line per run: what was done, what it had failed with and how it ended, store text escaped on one line", () => {
    expect(rerunLine(completed("a"))).toEqual({
      verdict: "RERUN",
      text: "a  was STORAGE_ERROR: the store failed to write execution run-1  →  completed",
    });
    const hostile = rerunLine({
      ...skipped("x\u001b[2J", "BUSY"),
      failed: { code: "BUSY", error: "held\nRERUN  forged" },
    });
    expect(hostile.verdict).toBe("SKIPPED");
    expect(hostile.text).not.toContain("\u001b");
    // Its second line stays on this one: no row of its own.
    expect(hostile.text).not.toContain("\n");
    expect(hostile.text).toContain("was BUSY: held; RERUN  forged  →");
  });

  it("an error of several lines is shown whole on one line: the part that names the bad field is kept", () => {
    const line = rerunLine({
      executionId: "a",
      failed: {
        code: "REPLAY_DIVERGENCE",
        error: "Invalid arguments for shop.create_order:\n  - quantity: must be <= 10\n  - sku: required",
      },
      action: "would-rerun",
    });
    expect(line.text).toBe(
      "a  was REPLAY_DIVERGENCE: Invalid arguments for shop.create_order: - quantity: must be <= 10; - sku: required",
    );
  });

  it("flags to a query: --id alone with codes and --dry-run; the query flags otherwise; codes upper-cased and split", () => {
    expect(rerunQuery({ id: "run-1", code: ["storage_error,busy"], dryRun: true })).toEqual({
      executionId: "run-1",
      codes: ["STORAGE_ERROR", "BUSY"],
      dryRun: true,
    });
    expect(rerunQuery({ since: "1h", limit: "5" }, 10_000_000)).toEqual({
      status: "error",
      since: 10_000_000 - 3_600_000,
      limit: 5,
    });
  });
});
