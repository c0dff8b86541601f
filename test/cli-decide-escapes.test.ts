/**
 * What the `codemode` bin prints of text from a run: an escape code stored in a reason, who asked
 * for a run and an error with its own newlines print escaped (deny, show, a stale decision); and
 * `codemode cancel` on a paused run and on ended ones (R-MCP-T). Over a real SQLite file that the
 * tickets application writes too. Needs `npm run build` first.
 */
import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { CAUGHT, HOSTILE_REASON, RAW_CONTROLS, TWO_TICKETS, useDecideCli } from "./cli-decide-fixtures.ts";
import { problemLine, TIMEOUT } from "./cli-fixtures/run-cli.ts";

let runtime: CodemodeRuntime;
const { cli, paused, execution, states } = useDecideCli((opened) => {
  runtime = opened;
});

describe("codemode approve, deny and decide on batched pauses", () => {
  it(
    "an escape code stored in a reason prints escaped: in deny's report, show, and the stale-decision line",
    async () => {
      const executionId = await paused(CAUGHT);
      const denied = await cli("deny", executionId, "--seq", "0", "--reason", HOSTILE_REASON, "--by", "dana");
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stdout).toContain("\\u{1b}]52;c;");
      const shown = await cli("show", executionId);
      expect(shown.stdout).toContain("denied by dana");
      expect(shown.stdout).toContain("\\u{1b}[2J not today");
      const full = await cli("show", executionId, "--full");
      const late = await cli("approve", executionId, "--seq", "0");
      expect(late.code).toBe(4);
      expect(problemLine(late)).toMatch(
        new RegExp(
          `^codemode: execution ${executionId}: seq 0 \\(tickets\\.create\\) was already denied by dana at .+\\("\\\\u\\{1b\\}\\]52;c;`,
        ),
      );
      const json = await cli("show", executionId, "--json");
      for (const run of [denied, shown, full, late, json])
        for (const raw of RAW_CONTROLS) {
          expect(run.stdout).not.toContain(raw);
          expect(run.stderr).not.toContain(raw);
        }
      const outcome = JSON.parse(json.stdout) as Outcome & { log: Array<{ decision?: { reason?: string } }> };
      expect(outcome.log[0]?.decision?.reason).toBe(HOSTILE_REASON);
    },
    TIMEOUT,
  );

  it(
    "show prints who asked for the run, and an error with its own newlines, its later lines under its first, and hostile controls as code points",
    async () => {
      const failed = await runtime.execute({
        code: `async () => { throw new Error("the order failed:\\n  quantity: must be at most 10\\u001b[2J"); }`,
        by: "ann\u001b[2J via chat",
      });
      expect(failed.status).toBe("error");
      const shown = await cli("show", failed.executionId);
      expect(shown.code, shown.stderr).toBe(0);
      // Who asked for the run, on one line, escaped.
      expect(shown.stdout).toContain("  asked by    ann\\u{1b}[2J via chat\n");
      expect(shown.stdout).toMatch(
        /\n {2}error {7}\w+: .*the order failed:\n {16}quantity: must be at most 10\\u\{1b\}\[2J/,
      );
      expect(shown.stdout).not.toContain("\\u{a}");
      for (const raw of RAW_CONTROLS) expect(shown.stdout).not.toContain(raw);
    },
    TIMEOUT,
  );

  it(
    "R-MCP-T: codemode cancel rejects a paused run with its pending calls closed (CANCELLED); an ended run (one cancelled already included) exits 4, an unknown id 3",
    async () => {
      const executionId = await paused(TWO_TICKETS);
      const cancelled = await cli("cancel", executionId, "--reason", HOSTILE_REASON);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stdout).toBe(`Cancelled ${executionId}; the run ended rejected (CANCELLED).\n`);
      const state = await execution(executionId);
      expect(state).toMatchObject({ status: "rejected", errorCode: "CANCELLED" });
      expect(state.error).toBe(`cancelled by ops: ${HOSTILE_REASON}`);
      expect(states(state)).toEqual([
        [0, "error"],
        [1, "error"],
      ]);
      const shown = await cli("show", executionId);
      expect(shown.stdout).toContain("CANCELLED: cancelled by ops: \\u{1b}]52;c;");
      for (const raw of RAW_CONTROLS) expect(shown.stdout).not.toContain(raw);

      // Cancelled twice: the second finds the run ended, as the docs say (exit 4).
      const again = await cli("cancel", executionId);
      expect(again.code).toBe(4);
      expect(problemLine(again)).toBe(
        `codemode: execution ${executionId} has ended (rejected); there is nothing to cancel`,
      );
      const done = await runtime.execute({ code: "async () => 1" });
      const ended = await cli("cancel", done.executionId);
      expect(ended.code).toBe(4);
      expect(problemLine(ended)).toBe(
        `codemode: execution ${done.executionId} has ended (completed); there is nothing to cancel`,
      );
      const unknown = await cli("cancel", "no-such-run");
      expect(unknown.code).toBe(3);
    },
    TIMEOUT,
  );
});
