/**
 * `codemode approve` and `deny` as an operator runs them on batched pauses (R-AP-8) and decisions
 * with kinds (R-AP-9): the `codemode` bin (a child process of the built package) over a real
 * SQLite file that the tickets application writes too. `decide --file`, `--grant` and usage errors
 * are in cli-decide-file.test.ts, escaped output and `cancel` in cli-decide-escapes.test.ts.
 * Needs `npm run build` first.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAUGHT, ONE_TITLE, TWO_TICKETS, useDecideCli } from "./cli-decide-fixtures.ts";
import { problemLine, TIMEOUT } from "./cli-fixtures/run-cli.ts";

const { directory, cli, paused, execution, states } = useDecideCli();

describe("codemode approve, deny and decide on batched pauses", () => {
  it(
    "R-AP-8: show, executions and pending list every seq a paused run waits on; approve with two --seq runs both and completes",
    async () => {
      const executionId = await paused(TWO_TICKETS);
      const shown = await cli("show", executionId);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain("  waiting at  seq 0 (tickets.create) and seq 1 (tickets.create)");
      expect(shown.stdout).toMatch(/0\s+tickets\.create\s+pending\s+\{"title":"A"\}\s+waiting for approval/);
      expect(shown.stdout).toMatch(/1\s+tickets\.create\s+pending\s+\{"title":"B"\}\s+waiting for approval/);
      expect(shown.stderr).toContain(`Waiting at seqs 0, 1. Approve all: codemode approve ${executionId}`);
      const listed = await cli("executions", "--status", "paused");
      expect(listed.stdout).toMatch(new RegExp(`${executionId}\\s+paused.*seqs 0, 1`));
      const pending = await cli("pending", "--json");
      const items = (JSON.parse(pending.stdout) as { items: Array<{ executionId: string; seq: number }> }).items;
      expect(items.filter((item) => item.executionId === executionId).map((item) => item.seq)).toEqual([0, 1]);

      const approved = await cli("approve", executionId, "--seq", "0", "--seq", "1", "--by", "dana");
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe(
        [
          `Decided 2 actions of ${executionId}:`,
          "  approved seq 0 (tickets.create)",
          "  approved seq 1 (tickets.create)",
          "The run completed.",
          'Result: [{"id":101,"title":"A"},{"id":101,"title":"B"}]',
          "",
        ].join("\n"),
      );
      const state = await execution(executionId);
      expect(state.log.map((entry) => entry.decision)).toMatchObject([
        { approved: true, decision: "approve", by: "dana" },
        { approved: true, decision: "approve", by: "dana" },
      ]);
    },
    TIMEOUT,
  );

  it(
    "R-AP-8: approve without --seq approves every pending action; a --seq not pending is refused (exit 4) naming what waits, and nothing changes",
    async () => {
      const executionId = await paused(TWO_TICKETS);
      const stale = await cli("approve", executionId, "--seq", "0", "--seq", "5");
      expect(stale.code).toBe(4);
      expect(problemLine(stale)).toBe(
        `codemode: execution ${executionId}: seq 5 is not pending; the run waits at seq 0 (tickets.create) and seq 1 (tickets.create); see: codemode show ${executionId}`,
      );
      expect(states(await execution(executionId))).toEqual([
        [0, "pending"],
        [1, "pending"],
      ]);
      const all = await cli("approve", executionId, "--json");
      expect(all.code, all.stderr).toBe(0);
      expect(JSON.parse(all.stdout)).toMatchObject({ status: "completed", result: [{ title: "A" }, { title: "B" }] });
      expect((await execution(executionId)).log.map((entry) => entry.decision?.by)).toEqual(["ops", "ops"]);
    },
    TIMEOUT,
  );

  it(
    "R-AP-9: approve --args edits the one call, the tool receives the edited arguments, and show prints what was asked and what ran; arguments the schema refuses exit 9 and change nothing",
    async () => {
      const executionId = await paused(ONE_TITLE);
      const refused = await cli("approve", executionId, "--seq", "0", "--args", '{"priority":"high"}');
      expect(refused.code).toBe(9);
      expect(problemLine(refused)).toMatch(
        new RegExp(
          `^codemode: execution ${executionId}: the decision was refused, nothing changed: seq 0 \\(tickets\\.create\\): .*title`,
        ),
      );
      const asJson = await cli("approve", executionId, "--seq", "0", "--args", '{"priority":"high"}', "--json");
      expect(JSON.parse(asJson.stdout)).toMatchObject({ error: { exitCode: 9, code: "INVALID_DECISION" } });
      const untouched = await execution(executionId);
      expect(untouched.status).toBe("paused");
      expect(untouched.log[0]).toMatchObject({ state: "pending", args: { title: "asked", priority: "low" } });
      expect(untouched.log[0]?.decision).toBeUndefined();

      const argsFile = join(directory, "edited-args.json");
      writeFileSync(argsFile, JSON.stringify({ title: "edited", priority: "low" }));
      const edited = await cli("approve", executionId, "--seq", "0", "--args-file", argsFile, "--by", "dana");
      expect(edited.code, edited.stderr).toBe(0);
      expect(edited.stdout).toBe(
        `Edited seq 0 (tickets.create) of ${executionId} to {"title":"edited","priority":"low"} (asked {"title":"asked","priority":"low"}); the run completed.\nResult: "edited"\n`,
      );
      const state = await execution(executionId);
      expect(state.log[0]).toMatchObject({
        state: "applied",
        args: { title: "edited" },
        requestedArgs: { title: "asked" },
        decision: { decision: "edit", by: "dana" },
      });
      const shown = await cli("show", executionId);
      expect(shown.stdout).toMatch(
        /0\s+tickets\.create\s+applied\s+\{"title":"edited","priority":"low"\} \(asked \{"title":"asked","priority":"low"\}\)\s+\{.+\}\s+edited by dana/,
      );
      const full = await cli("show", executionId, "--full");
      expect(full.stdout).toContain('  asked for: {\n    "title": "asked",');
      expect(full.stdout).toContain('  ran with (edited): {\n    "title": "edited",');
    },
    TIMEOUT,
  );

  it(
    "R-AP-9: deny with a reason rejects the call inside the program, which catches it; show prints the denied entry; an uncaught denial ends the run rejected (exit 0)",
    async () => {
      const caught = await paused(CAUGHT);
      const denied = await cli("deny", caught, "--seq", "0", "--reason", "not today", "--by", "dana");
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stdout).toBe(
        `Denied seq 0 (tickets.create) of ${caught} ("not today"); the run completed.\nResult: "ApprovalDenied: tickets.create({\\"title\\":\\"A\\"}) was denied by dana: not today"\n`,
      );
      expect((await execution(caught)).log[0]).toMatchObject({
        state: "denied",
        decision: { approved: false, decision: "deny", by: "dana", reason: "not today" },
      });
      const shown = await cli("show", caught);
      expect(shown.stdout).toMatch(
        /0\s+tickets\.create\s+denied\s+\{"title":"A"\}\s+tickets\.create\(\{\\"title\\":\\"A\\"\}\) was …\s+denied by dana .+: not today/,
      );

      const uncaught = await paused(ONE_TITLE);
      const ended = await cli("deny", uncaught, "--seq", "0", "--reason", "duplicate");
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.stdout).toBe(
        `Denied seq 0 (tickets.create) of ${uncaught} ("duplicate"); the run ended rejected: the program did not catch the denial (tickets.create({"title":"asked","priority":"low"}) was denied by ops: duplicate).\n`,
      );
      expect((await execution(uncaught)).status).toBe("rejected");
    },
    TIMEOUT,
  );
});
