/**
 * `codemode approve`, `deny` and `decide` as an operator runs them on batched pauses (R-AP-8) and
 * decisions with kinds (R-AP-9): the `codemode` bin (a child process of the built package) over a
 * real SQLite file that the tickets application writes too. Needs `npm run build` first.
 */
import { randomUUID } from "node:crypto";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CodemodeRuntime, ExecutionState, Outcome } from "@codemode/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG, codemode, problemLine, scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";
import { openTicketsRuntime } from "./cli-fixtures/tickets.ts";

const directory = scratchDirectory();

/** Opens two tickets at once: one pause with both pending. */
const TWO_TICKETS = `async () => Promise.all([tickets.create({ title: "A" }), tickets.create({ title: "B" })])`;

/** Two tickets at once, each outcome kept: a denial of one does not end the run. */
const TWO_SETTLED = `async () => (await Promise.allSettled([tickets.create({ title: "A" }), tickets.create({ title: "B" })]))
  .map((settled) => settled.status === "fulfilled" ? settled.value.title : settled.reason.name + ": " + settled.reason.message)`;

/** One ticket, and the title the tool received. */
const ONE_TITLE = `async () => (await tickets.create({ title: "asked", priority: "low" })).title`;

/** One ticket; a denial is caught and returned. */
const CAUGHT = `async () => {
  try { await tickets.create({ title: "A" }); return "created"; }
  catch (error) { return error.name + ": " + error.message; }
}`;

/** Three tickets one after another: three pauses, unless a grant approves the later ones. */
const THREE_IN_TURN = `async () => { const titles = []; for (const title of ["A", "B", "C"]) titles.push((await tickets.create({ title })).title); return titles; }`;

/** A reason that, printed raw, would set the clipboard (OSC 52) and clear the screen. */
const HOSTILE_REASON = "\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u001b[2J not today";

const RAW_CONTROLS = ["\u001b", "\u0007"];

describe("codemode approve, deny and decide on batched pauses", () => {
  const store = `sqlite:${join(directory, "decide.sqlite")}`;
  const name = `cli-decide-${randomUUID().slice(0, 8)}`;
  let runtime: CodemodeRuntime;
  let close: () => Promise<void>;
  const cli = (...args: string[]) =>
    codemode(["--config", CONFIG, ...args], {
      CODEMODE_TEST_STORE: store,
      CODEMODE_TEST_NAME: name,
      CODEMODE_OPERATOR: "ops",
    });
  const paused = async (code: string) => {
    const outcome = await runtime.execute({ code });
    expect(outcome.status).toBe("paused");
    return outcome.executionId;
  };
  const execution = async (executionId: string) => (await runtime.execution(executionId)) as ExecutionState;
  const states = (state: ExecutionState) => state.log.map((entry) => [entry.seq, entry.state]);

  beforeAll(() => {
    ({ runtime, close } = openTicketsRuntime(store, name));
  });
  afterAll(() => close());

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

  it(
    "R-AP-9: decide --file applies a decision per seq (approve one, deny the other); a bare array decides some and the run stays paused at the rest",
    async () => {
      const both = await paused(TWO_SETTLED);
      const file = join(directory, "decisions.json");
      writeFileSync(
        file,
        JSON.stringify({
          by: "ann",
          decisions: [
            { seq: 0, decision: "approve", reason: "fine" },
            { seq: 1, decision: "deny", reason: "duplicate" },
          ],
        }),
      );
      const decided = await cli("decide", both, "--file", file);
      expect(decided.code, decided.stderr).toBe(0);
      expect(decided.stdout).toBe(
        [
          `Decided 2 actions of ${both}:`,
          '  approved seq 0 (tickets.create) ("fine")',
          '  denied seq 1 (tickets.create) ("duplicate")',
          "The run completed.",
          'Result: ["A","ApprovalDenied: tickets.create({\\"title\\":\\"B\\"}) was denied by ann: duplicate"]',
          "",
        ].join("\n"),
      );
      expect(states(await execution(both))).toEqual([
        [0, "applied"],
        [1, "denied"],
      ]);

      const some = await paused(TWO_TICKETS);
      const array = join(directory, "one-decision.json");
      writeFileSync(array, JSON.stringify([{ seq: 0, decision: "approve" }]));
      const partial = await cli("decide", some, "--file", array);
      expect(partial.code, partial.stderr).toBe(0);
      expect(partial.stdout).toBe(
        `Approved seq 0 (tickets.create) of ${some}; the run paused again at seq 1 (tickets.create).\nArguments: {"title":"B"}\n`,
      );
      expect(partial.stderr).toContain(
        `Approve: codemode approve ${some} --seq 1   Deny: codemode deny ${some} --seq 1`,
      );

      const malformed = join(directory, "malformed.json");
      writeFileSync(malformed, JSON.stringify([{ seq: 1, decision: "maybe" }]));
      const refused = await cli("decide", some, "--file", malformed);
      expect(refused.code).toBe(9);
      expect(problemLine(refused)).toBe(
        `codemode: execution ${some}: the decision was refused, nothing changed: decisions[0].decision must be "approve", "deny" or "edit"`,
      );
      expect(states(await execution(some))).toEqual([
        [0, "applied"],
        [1, "pending"],
      ]);
    },
    TIMEOUT,
  );

  it(
    "R-AP-9: --grant approves the later calls of the method as they come; show's audit lines say who granted and through which seq",
    async () => {
      const executionId = await paused(THREE_IN_TURN);
      const several = await cli("approve", executionId, "--grant", "2");
      expect([several.code, several.stderr]).toEqual([2, expect.stringContaining("--grant goes with one call")]);
      const granted = await cli("approve", executionId, "--seq", "0", "--grant", "2", "--by", "dana");
      expect(granted.code, granted.stderr).toBe(0);
      expect(granted.stdout).toBe(
        `Approved seq 0 (tickets.create) of ${executionId}, with a grant for 2 more tickets.create calls; the run completed.\nResult: ["A","B","C"]\n`,
      );
      expect((await execution(executionId)).log.map((entry) => entry.decision)).toMatchObject([
        { decision: "approve", grant: { calls: 2 } },
        { viaGrant: 0 },
        { viaGrant: 0 },
      ]);
      const shown = await cli("show", executionId);
      expect(shown.stdout).toMatch(/0\s+tickets\.create\s+applied.+approved by dana .+, grants 2 more calls\n/);
      expect(shown.stdout).toMatch(/1\s+tickets\.create\s+applied.+approved by dana through the grant at seq 0 /);
      expect(shown.stdout).toMatch(/2\s+tickets\.create\s+applied.+approved by dana through the grant at seq 0 /);
    },
    TIMEOUT,
  );

  it(
    "usage errors exit 2 and change nothing: --args with zero or two --seq, --args and --args-file, bad JSON, deny without --reason, a bad --file (an endless one included), --grant 0",
    async () => {
      const executionId = await paused(TWO_TICKETS);
      const bad = join(directory, "bad.json");
      writeFileSync(bad, "{ not json");
      const wrongShape = join(directory, "wrong-shape.json");
      writeFileSync(wrongShape, JSON.stringify({ choices: [] }));
      const endless = join(directory, "endless.json");
      symlinkSync("/dev/zero", endless);
      const cases: Array<[string[], string | RegExp]> = [
        [
          ["approve", executionId, "--args", "{}"],
          "codemode: --args edits one call: give exactly one --seq (none was given)",
        ],
        [
          ["approve", executionId, "--seq", "0", "--seq", "1", "--args", "{}"],
          "codemode: --args edits one call: give exactly one --seq (2 were given)",
        ],
        [
          ["approve", executionId, "--seq", "0", "--args", "{}", "--args-file", bad],
          "codemode: give the edited arguments once: --args or --args-file, not both",
        ],
        [["approve", executionId, "--seq", "0", "--args", "{ title"], /codemode: --args is not JSON: /],
        [["approve", executionId, "--seq", "0", "--seq", "0"], "codemode: --seq 0 is given twice"],
        [["approve", executionId, "--grant", "0"], 'codemode: --grant needs a whole number of at least 1, not "0"'],
        [["deny", executionId, "--seq", "0"], /required option '--reason <text>' not specified/],
        [["deny", executionId, "--seq", "0", "--reason", "  "], /codemode: deny needs --reason/],
        [
          ["decide", executionId, "--file", join(directory, "missing.json")],
          /codemode: could not read --file .*missing\.json: ENOENT/,
        ],
        [["decide", executionId, "--file", bad], /codemode: --file .*bad\.json is not JSON: /],
        // A link to an endless device: `stat` says 0 bytes, the read stops at the bound.
        [
          ["decide", executionId, "--file", endless],
          /codemode: could not read --file .*endless\.json: it has more than 16777216 bytes; at most that many are read/,
        ],
        [["decide", executionId, "--file", wrongShape], /must hold \{ "decisions": \[\.\.\.\].*; it has "choices"\n$/],
      ];
      // Each is refused before anything is read or written, so they may run side by side.
      const results = await Promise.all(cases.map(([args]) => cli(...args)));
      for (const [index, [args, line]] of cases.entries()) {
        const result = results[index] as Awaited<ReturnType<typeof cli>>;
        expect(result.code, args.join(" ")).toBe(2);
        if (typeof line === "string") expect(problemLine(result)).toBe(line);
        else expect(result.stderr).toMatch(line);
      }
      expect(states(await execution(executionId))).toEqual([
        [0, "pending"],
        [1, "pending"],
      ]);
    },
    TIMEOUT,
  );

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
