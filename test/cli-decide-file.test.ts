/**
 * `codemode decide --file` (a decision per seq, R-AP-9), `--grant` (the later calls of a method
 * approved as they come) and the usage errors that exit 2 and change nothing, over a real SQLite
 * file that the tickets application writes too. Needs `npm run build` first.
 */
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { THREE_IN_TURN, TWO_SETTLED, TWO_TICKETS, useDecideCli } from "./cli-decide-fixtures.ts";
import { problemLine, TIMEOUT } from "./cli-fixtures/run-cli.ts";

const { directory, cli, paused, execution, states } = useDecideCli();

describe("codemode approve, deny and decide on batched pauses", () => {
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
});
