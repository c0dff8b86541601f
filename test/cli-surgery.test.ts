/**
 * `codemode rerun` and `codemode fork` as an operator runs them after an outage: runs failed in a
 * real SQLite file by the tickets application (the store refused a result's write for a moment,
 * test/outage-fixtures.ts), rerun and forked by the `codemode` bin (a child process of the built
 * package) with the usual config. Needs `npm run build` first.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import type { RerunReport } from "@codemode/core/operations";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG, codemode, FIXTURES, problemLine, scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";
import { FREE_PROGRAM, GATED_PROGRAM, tickets } from "./cli-fixtures/tickets.ts";
import { type Outage, withOutage } from "./outage-fixtures.ts";

const directory = scratchDirectory();

/** A failure message that, printed raw, would set the clipboard (OSC 52) and clear the screen. */
const HOSTILE_ERROR = "\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u001b[2J refund failed\nRERUN  forged";

/** A store with the tickets application's runs, and the `codemode` bin over it. */
function storyStore(label: string) {
  const store = `sqlite:${join(directory, `${label}.sqlite`)}`;
  const name = `surgery-${label}`;
  const raw = sqliteStorage(store.slice("sqlite:".length));
  const { storage, outage } = withOutage(raw);
  const runtime: CodemodeRuntime = createCodemodeRuntime({
    name,
    connectors: [tickets],
    storage,
    logger: { warn() {} },
  });
  const cli = (...args: string[]) =>
    codemode(["--config", CONFIG, ...args], { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: name });
  return {
    runtime,
    storage,
    store,
    outage,
    cli,
    async close() {
      await runtime.close();
      await raw.close();
    },
  };
}

/** A run the outage fails: the store refuses to record its first call's result. */
async function failedByOutage(runtime: CodemodeRuntime, outage: Outage, code: string): Promise<string> {
  outage.refuseWrites = 1;
  const outcome = await runtime.execute({ code });
  expect(outcome).toMatchObject({ status: "error", code: "STORAGE_ERROR" });
  expect(outage.refuseWrites).toBe(0);
  return outcome.executionId;
}

describe("codemode rerun: failed runs run again from the command line", () => {
  const story = storyStore("rerun");
  let free: string;
  let gated: string;
  let thrown: string;

  beforeAll(async () => {
    free = await failedByOutage(story.runtime, story.outage, FREE_PROGRAM);
    gated = await failedByOutage(story.runtime, story.outage, GATED_PROGRAM);
    const failed = await story.runtime.execute({
      code: `async () => { await tickets.list({ status: "open" }); throw new Error(${JSON.stringify(HOSTILE_ERROR)}); }`,
    });
    expect(failed).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
    thrown = failed.executionId;
  });
  afterAll(() => story.close());

  it(
    "--dry-run lists the runs the store failed and changes nothing; then rerun brings each to its end (completed, or paused at its approval): exit 0",
    async () => {
      const dry = await story.cli("rerun", "--dry-run");
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout.split("\n")).toEqual([
        expect.stringMatching(new RegExp(`^WOULD +${gated}  was STORAGE_ERROR: `)),
        expect.stringMatching(new RegExp(`^WOULD +${free}  was STORAGE_ERROR: `)),
        "2 would run again, 0 skipped (dry run: nothing ran)",
        "",
      ]);
      expect((await story.runtime.execution(free))?.status).toBe("error");

      const json = await story.cli("rerun", "--status", "error", "--code", "STORAGE_ERROR", "--since", "1h", "--json");
      expect(json.code, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout) as RerunReport;
      expect(report.dryRun).toBe(false);
      expect(report.results).toMatchObject([
        { executionId: gated, action: "rerun", outcome: { status: "paused", pending: [{ seq: 1, method: "create" }] } },
        { executionId: free, action: "rerun", outcome: { status: "completed", result: 1 } },
      ]);
      expect(await story.runtime.execution(free)).toMatchObject({
        status: "completed",
        reruns: [{ code: "STORAGE_ERROR" }],
      });
      const show = await story.cli("show", free);
      expect(show.stdout).toMatch(/ {2}rerun {7}once, last after STORAGE_ERROR: /);

      const none = await story.cli("rerun");
      expect(none.code).toBe(0);
      expect(none.stdout).toBe("0 ran again (0 failed again), 0 skipped\n");
    },
    TIMEOUT,
  );

  it(
    "a run its program failed is rerun only when asked by code, fails the same way again (exit 1), and its stored message is printed escaped on one line",
    async () => {
      const again = await story.cli("rerun", "--code", "PROGRAM_ERROR");
      expect(again.code, again.stderr).toBe(1);
      const lines = again.stdout.split("\n");
      expect(lines[0]).toMatch(
        new RegExp(`^FAILED +${thrown}  was PROGRAM_ERROR: .*refund failed.*→  error PROGRAM_ERROR: `),
      );
      expect(lines[1]).toBe("1 ran again (1 failed again), 0 skipped");
      for (const raw of ["\u0007", "\u001b"]) expect(again.stdout).not.toContain(raw);
      expect(again.stdout).not.toMatch(/^RERUN {2}forged/m);
      expect(again.stderr).toContain("codemode fork <id> --from <seq>");
    },
    TIMEOUT,
  );

  it(
    "an unknown --id exits 3, a run that is not failed 4; flags it cannot take exit 2",
    async () => {
      const unknown = await story.cli("rerun", "--id", "no-such-run");
      expect(unknown.code).toBe(3);
      expect(problemLine(unknown)).toBe(
        "codemode: no execution no-such-run in the store; list them with: codemode executions",
      );
      const completed = await story.cli("rerun", "--id", free, "--json");
      expect(completed.code).toBe(4);
      expect(JSON.parse(completed.stdout)).toMatchObject({
        results: [{ executionId: free, action: "skipped", reason: { code: "NOT_PAUSED" } }],
      });
      const usage: Array<[string[], string]> = [
        [["--status", "paused"], "rerun takes failed runs only: --status error"],
        [["--code", "SYNTAX_ERROR"], "SYNTAX_ERROR runs fail the same way again; fork them with new code"],
        [["--code", "OOPS"], "unknown error code OOPS"],
        [["--since", "30"], "--since needs a duration"],
        [["--limit", "0"], "--limit needs a whole number of at least 1"],
        [["--id", free, "--since", "1h"], "--id reruns one execution; leave out --since"],
      ];
      for (const [args, line] of usage) {
        const result = await story.cli("rerun", ...args);
        expect(result.code, args.join(" ")).toBe(2);
        expect(problemLine(result)).toContain(line);
      }
    },
    TIMEOUT,
  );
});

describe("codemode fork: a new run from a stored one's step", () => {
  const story = storyStore("fork");
  let completed: string;

  beforeAll(async () => {
    const outcome = await story.runtime.execute({ code: FREE_PROGRAM });
    expect(outcome.status).toBe("completed");
    completed = outcome.executionId;
  });
  afterAll(() => story.close());

  it(
    "from a seq, with the same code or --code-file: the new run's id and how it ended, exit 0; the original is untouched",
    async () => {
      const before = await story.runtime.execution(completed);
      const same = await story.cli("fork", completed, "--from", "0");
      expect(same.code, same.stderr).toBe(0);
      const [first, second] = same.stdout.split("\n");
      const forkId = /as ([0-9a-f-]{36})\.$/.exec(first ?? "")?.[1];
      expect(first).toBe(`Forked ${completed} from seq 0 as ${forkId}.`);
      expect(second).toBe(`Ran ${forkId}; the run completed.`);
      expect(await story.runtime.execution(forkId ?? "")).toMatchObject({
        status: "completed",
        forkedFrom: { executionId: completed, fromSeq: 0 },
      });
      expect((await story.cli("show", forkId ?? "")).stdout).toContain(`forked from ${completed} at seq 0`);
      expect(await story.runtime.execution(completed)).toEqual(before);

      const file = join(directory, "gated.js");
      writeFileSync(file, GATED_PROGRAM);
      const gated = await story.cli("fork", completed, "--from", "0", "--code-file", file, "--json");
      expect(gated.code, gated.stderr).toBe(0);
      expect(JSON.parse(gated.stdout)).toMatchObject({ status: "paused", pending: [{ seq: 1, method: "create" }] });
    },
    TIMEOUT,
  );

  it(
    "an unknown run or a seq beyond its log exits 3; a missing --from, a bad seq or code file exits 2; code that does not parse exits 1",
    async () => {
      const unknown = await story.cli("fork", "no-such-run", "--from", "0");
      expect(unknown.code).toBe(3);
      expect(problemLine(unknown)).toBe(
        "codemode: no execution no-such-run in the store; list them with: codemode executions",
      );
      const beyond = await story.cli("fork", completed, "--from", "9");
      expect(beyond.code).toBe(3);
      expect(problemLine(beyond)).toContain("seq 9 is beyond the log of this execution");

      const empty = join(directory, "empty.js");
      writeFileSync(empty, "  \n");
      const usage: Array<[string[], string]> = [
        [[completed], "required option '--from <seq>' not specified"],
        [[completed, "--from", "-1"], "--from needs a whole number"],
        [[completed, "--from", "0", "--code-file", join(directory, "missing.js")], "there is no such file"],
        [[completed, "--from", "0", "--code-file", empty], "is empty"],
      ];
      for (const [args, line] of usage) {
        const result = await story.cli("fork", ...args);
        expect(result.code, args.join(" ")).toBe(2);
        expect(result.stderr).toContain(line);
      }
      const broken = join(directory, "broken.js");
      writeFileSync(broken, "async () => { return (");
      const syntax = await story.cli("fork", completed, "--from", "0", "--code-file", broken);
      expect(syntax.code).toBe(1);
      expect(syntax.stdout).toContain("SYNTAX_ERROR");
    },
    TIMEOUT,
  );

  it(
    "a run that ended REPLAY_DIVERGENCE: show prints what differed from the record; a fork from the call asks again",
    async () => {
      // Real randomness: the title changes on every pass, so the approval's replay diverges.
      const random = createCodemodeRuntime({
        name: "surgery-fork",
        connectors: [tickets],
        storage: story.storage,
        deterministic: false,
      });
      try {
        const paused = await random.execute({ code: "async () => tickets.create({ title: 't' + Math.random() })" });
        expect(paused.status).toBe("paused");
        const approved = await story.cli("approve", paused.executionId);
        expect(approved.code, approved.stderr).toBe(1);
        expect(approved.stdout).toContain("REPLAY_DIVERGENCE");
        const show = await story.cli("show", paused.executionId);
        expect(show.stdout).toContain("  diverged    seq 0 arguments: recorded tickets.create vs now tickets.create\n");
        expect(show.stdout).toMatch(/^ {16}args\.title: "t0\.\d+" → "t0\.\d+"$/m);
        const forked = await story.cli("fork", paused.executionId, "--from", "0", "--json");
        expect(JSON.parse(forked.stdout)).toMatchObject({ status: "paused", pending: [{ seq: 0, method: "create" }] });
      } finally {
        await random.close();
      }
    },
    TIMEOUT,
  );

  it(
    "a fork stored before its first pass met a store blip: its id is shown, and exit 7 says the store failed",
    async () => {
      const blip = await codemode(
        ["--config", join(FIXTURES, "fork-blip.config.ts"), "fork", completed, "--from", "0"],
        {
          CODEMODE_TEST_STORE: story.store,
          CODEMODE_TEST_NAME: "surgery-fork",
        },
      );
      expect(blip.code, blip.stderr).toBe(7);
      const forkId = /as ([0-9a-f-]{36})\.$/m.exec(blip.stdout)?.[1];
      expect(blip.stdout).toContain(`Forked ${completed} from seq 0 as ${forkId}.`);
      expect(blip.stdout).toContain("STORAGE_ERROR");
      expect(await story.runtime.execution(forkId ?? "")).toMatchObject({ forkedFrom: { executionId: completed } });
    },
    TIMEOUT,
  );

  it(
    "a store that is down: one line saying so, exit 7, for fork and rerun alike",
    async () => {
      const env = {
        CODEMODE_TEST_STORE: "redis://127.0.0.1:1",
        CODEMODE_TEST_NAME: "down",
        CODEMODE_TEST_CONNECT_MS: "300",
      };
      for (const args of [
        ["rerun", "--json"],
        ["fork", completed, "--from", "0", "--json"],
      ]) {
        const down = await codemode(["--config", CONFIG, ...args], env);
        expect(down.code, args.join(" ")).toBe(7);
        expect(problemLine(down)).toMatch(/^codemode: the store is unreachable \(.+\); check that it is running/);
        expect(JSON.parse(down.stdout)).toMatchObject({ error: { exitCode: 7, code: "STORAGE_ERROR" } });
      }
    },
    TIMEOUT,
  );
});
