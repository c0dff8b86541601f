import type { ReplayCheckReport, ReplayCheckResult } from "@codemode/core/operations";
import { describe, expect, it } from "vitest";
import { CliError } from "../cli-error.js";
import { EXIT_CODES } from "../exit-codes.js";
import { replayCheckExitCode, replayCheckTarget, resultText } from "./replay-check.js";

const diverging = (divergence: NonNullable<ReplayCheckResult["divergence"]>): ReplayCheckResult => ({
  executionId: "run-1",
  status: "paused",
  ok: false,
  replayed: 1,
  stoppedAt: "divergence",
  divergence,
});

const usageMessage = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    if (CliError.isInstance(error) && error.exitCode === EXIT_CODES.usage) return error.message;
    throw error;
  }
  throw new Error("it was not refused");
};

describe("replay-check's lines: each divergence kind in words, store values escaped and clipped", () => {
  it("arguments: every differing path with recorded → now, a missing side as (absent)", () => {
    const text = resultText(
      diverging({
        seq: 2,
        kind: "arguments",
        recorded: { connector: "shop", method: "create_order", args: { sku: "mug", quantity: 2 } },
        now: { connector: "shop", method: "create_order", args: { sku: "cup", count: 2 } },
        argumentDiff: [
          { path: ".count", now: 2 },
          { path: ".quantity", recorded: 2 },
          { path: ".sku", recorded: "mug", now: "cup" },
        ],
        message: "Replay diverged at seq 2: …",
      }),
    );
    expect(text).toEqual({
      verdict: "DIVERGES",
      head: "run-1  paused  seq 2 arguments: recorded shop.create_order vs now shop.create_order",
      details: [
        "the program now calls it with other arguments",
        "args.count: (absent) → 2",
        "args.quantity: 2 → (absent)",
        'args.sku: "mug" → "cup"',
      ],
    });
  });

  it("call, missing-tool and ended: what was recorded against what the program does now", () => {
    const call = resultText(
      diverging({
        seq: 0,
        kind: "call",
        recorded: { connector: "shop", method: "search", args: { query: "mug" } },
        now: { connector: "shop", method: "browse", args: undefined },
        message: "…",
      }),
    );
    expect(call.head).toBe("run-1  paused  seq 0 call: recorded shop.search vs now shop.browse");
    expect(call.details).toEqual([
      "the program now makes another call at this seq",
      'recorded arguments: {"query":"mug"}',
    ]);
    const missing = resultText(
      diverging({
        seq: 1,
        kind: "missing-tool",
        recorded: { connector: "shop", method: "create_order", args: {} },
        message: "…",
      }),
    );
    expect(missing.details[0]).toBe("the recorded tool is not configured any more");
    const ended = resultText(
      diverging({ seq: 3, kind: "ended", recorded: { connector: "shop", method: "notify", args: "x" }, message: "…" }),
    );
    expect(ended.head).toBe("run-1  paused  seq 3 ended: recorded shop.notify");
  });

  it("hostile paths, names and values are shown as code points on one line; long values are clipped", () => {
    const text = resultText({
      ...diverging({
        seq: 1,
        kind: "arguments",
        recorded: { connector: "shop", method: "note\u001b[2J", args: {} },
        now: { connector: "shop", method: "note\u001b[2J", args: {} },
        argumentDiff: [{ path: '["a\\nb"]', recorded: `\u202e${"x".repeat(100)}`, now: "\u009b2J" }],
        message: "…",
      }),
      executionId: "run\n-2",
    });
    const all = [text.head, ...text.details].join("\n");
    for (const code of ["\u001b", "\u009b", "\u202e"]) expect(all).not.toContain(code);
    expect(text.head).toBe(
      "run\\u{a}-2  paused  seq 1 arguments: recorded shop.note\\u{1b}[2J vs now shop.note\\u{1b}[2J",
    );
    expect(text.details[1]).toBe(`args["a\\nb"]: "\\u{202e}${"x".repeat(57)}… → "\\u{9b}2J"`);
  });

  it("ok and ERROR lines; exit 8 when any run diverges, else 1 when one could not be checked, else 0", () => {
    const ok: ReplayCheckResult = { executionId: "a", status: "paused", ok: true, replayed: 2, stoppedAt: "frontier" };
    const failed: ReplayCheckResult = {
      executionId: "b",
      status: "paused",
      ok: false,
      replayed: 0,
      stoppedAt: "error",
      error: { code: "TIMEOUT", message: "the pass ran out of time\nat line 3" },
    };
    expect(resultText(ok)).toEqual({
      verdict: "ok",
      head: "a  paused  replayed 2 calls up to its next unrecorded call",
      details: [],
    });
    expect(resultText(failed)).toEqual({
      verdict: "ERROR",
      head: "b  paused  TIMEOUT: the pass ran out of time",
      details: [],
    });
    const report = (results: ReplayCheckResult[]): ReplayCheckReport => ({
      ok: results.every((result) => result.ok),
      results,
    });
    const divergent = diverging({ seq: 0, kind: "ended", message: "…" });
    expect(replayCheckExitCode(report([]))).toBe(EXIT_CODES.ok);
    expect(replayCheckExitCode(report([ok]))).toBe(EXIT_CODES.ok);
    expect(replayCheckExitCode(report([ok, failed]))).toBe(EXIT_CODES.runFailed);
    expect(replayCheckExitCode(report([failed, divergent]))).toBe(EXIT_CODES.diverges);
  });
});

describe("replay-check's flags", () => {
  it("--id alone, or a query from --status, --since and --limit", () => {
    expect(replayCheckTarget({ id: "run-1" })).toBe("run-1");
    expect(replayCheckTarget({})).toEqual({});
    expect(replayCheckTarget({ status: ["paused,running", "error"], since: "30m", limit: "1000" }, 10_000_000)).toEqual(
      { status: ["paused", "running", "error"], since: 10_000_000 - 30 * 60_000, limit: 1000 },
    );
    expect(replayCheckTarget({ since: "7d" }, 1e12)).toEqual({ since: 1e12 - 7 * 86_400_000 });
  });

  it("refuses what it cannot read as usage errors", () => {
    for (const since of ["7x", "30", "1.5h", "ms", "-1h", "5ms"])
      expect(usageMessage(() => replayCheckTarget({ since }))).toContain("--since needs a duration such as 90s");
    expect(usageMessage(() => replayCheckTarget({ limit: "0" }))).toContain("--limit needs a whole number");
    expect(usageMessage(() => replayCheckTarget({ limit: "1001" }))).toContain("from 1 to 1000");
    expect(usageMessage(() => replayCheckTarget({ status: ["sleeping"] }))).toContain("unknown status sleeping");
    expect(usageMessage(() => replayCheckTarget({ id: "run-1", since: "1h", limit: "5" }))).toBe(
      "--id checks one execution; leave out --since and --limit, which choose the runs without it",
    );
  });
});
