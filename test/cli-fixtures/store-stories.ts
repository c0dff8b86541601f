/**
 * The operator's commands against one store, as the SQLite and Redis CLI test files run them: the
 * `codemode` bin (a child process of the built package) over the store the tickets application
 * writes too. Listings and show; approve, reject and rollback; recover, expire, prune, snippets
 * and unknown ids.
 */
import { randomUUID } from "node:crypto";
import type { CodemodeRuntime, ExecutionState, Outcome, PendingAction, Snippet } from "@codemode/core";
import type { ExecutionSummary, RollbackReport } from "@codemode/core/operations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG, codemode, problemLine, type Run, TIMEOUT } from "./run-cli.ts";
import { FREE_PROGRAM, GATED_PROGRAM, openTicketsRuntime } from "./tickets.ts";

/** The operator's commands against one store: what the SQLite and Redis CLI test files run. */
export function cliStoreStories(label: string, storeOf: () => string): void {
  describe(`codemode against ${label}`, () => {
    const cli = useStoreCli(storeOf);
    listingStories(cli);
    decisionStories(cli);
    maintenanceStories(cli);
  });
}

/** The runtime the stories make runs with, once the describe's beforeAll has run. */
let runtime: CodemodeRuntime;

/** What one store's stories share: the store, the runtime's name, and the bin against them. */
interface StoreCli {
  store: string;
  name: string;
  /** The bin with the tickets config, against this store and runtime name. */
  run(...args: string[]): Promise<Run>;
  /** The bin's `--json` answer, after checking it exited 0. */
  json<T>(...args: string[]): Promise<T>;
  /** Runs GATED_PROGRAM, which pauses, and returns its execution id. */
  paused(): Promise<string>;
}

/** Opens the tickets runtime over the store before the describe's stories, and closes it after. */
function useStoreCli(storeOf: () => string): StoreCli {
  const name = `cli-${randomUUID().slice(0, 8)}`;
  const store = storeOf();
  let close: () => Promise<void>;
  const run = (...args: string[]) =>
    codemode(["--config", CONFIG, ...args], { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: name });
  const json = async <T>(...args: string[]): Promise<T> => {
    const result = await run(...args, "--json");
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as T;
  };
  const cli: StoreCli = {
    store,
    name,
    run,
    json,
    paused: async () => {
      const outcome = await runtime.execute({ code: GATED_PROGRAM });
      expect(outcome.status).toBe("paused");
      return outcome.executionId;
    },
  };
  beforeAll(() => {
    ({ runtime, close } = openTicketsRuntime(store, name));
  });
  afterAll(async () => {
    await close();
  });
  return cli;
}

/** executions, pending and show. */
function listingStories({ json, name, paused, run, store }: StoreCli): void {
  it(
    "executions, pending and show list what the store holds: pages, status filters, the call log as JSON and as a table",
    async () => {
      const first = await paused();
      const second = await paused();
      const done = await runtime.execute({ code: FREE_PROGRAM });

      const all = await json<{ items: ExecutionSummary[]; cursor?: string }>("executions");
      expect(all.items.map((item) => item.id)).toEqual([done.executionId, second, first]);
      const page = await json<{ items: ExecutionSummary[]; cursor?: string }>(
        "executions",
        "--status",
        "paused",
        "--limit",
        "1",
      );
      expect(page.items.map((item) => [item.id, item.status, item.pendingSeq])).toEqual([[second, "paused", 1]]);
      expect(page.cursor).toBeTruthy();
      const next = await json<{ items: ExecutionSummary[]; cursor?: string }>(
        "executions",
        "--status",
        "paused",
        "--limit",
        "1",
        "--cursor",
        page.cursor!,
      );
      expect(next.items.map((item) => item.id)).toEqual([first]);
      const everyPage = await json<{ items: ExecutionSummary[] }>(
        "executions",
        "--status",
        "paused",
        "--limit",
        "1",
        "--all",
      );
      expect(everyPage.items.map((item) => item.id)).toEqual([second, first]);

      const pending = await json<{ items: PendingAction[] }>("pending");
      expect(pending.items.map((action) => [action.executionId, action.seq, action.method])).toEqual([
        [second, 1, "create"],
        [first, 1, "create"],
      ]);

      const shown = await json<ExecutionState>("show", first);
      expect(shown.log.map((entry) => [entry.seq, entry.method, entry.state])).toEqual([
        [0, "list", "applied"],
        [1, "create", "pending"],
      ]);

      const table = await run("show", first);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/SEQ\s+CALL\s+STATE\s+ARGUMENTS\s+RESULT\s+DECISION/);
      expect(table.stdout).toMatch(
        /1\s+tickets\.create\s+pending\s+\{"title":"Refund alice@example\.com","pr…\s+waiting for approval/,
      );
      expect(table.stdout).not.toContain("Refund for order 1042");
      expect(table.stderr).toContain(`codemode approve ${first} --seq 1`);
      const full = await run("show", first, "--full");
      expect(full.stdout).toContain('"subject": "Refund for order 1042"');
      expect(full.stdout).toContain("tickets.create({ title:");
      const coloured = await codemode(["--config", CONFIG, "show", first], {
        CODEMODE_TEST_STORE: store,
        CODEMODE_TEST_NAME: name,
        NO_COLOR: "",
        FORCE_COLOR: "1",
      });
      expect(coloured.stdout).toContain("\u001b[33mpending");
    },
    TIMEOUT,
  );
}

/** approve, reject and rollback. */
function decisionStories({ json, paused, run }: StoreCli): void {
  it(
    "approve resumes the run to completion and records who and why; approving it again says who decided and when (exit 4)",
    async () => {
      const executionId = await paused();
      const approved = await json<Outcome>(
        "approve",
        executionId,
        "--seq",
        "1",
        "--by",
        "dana",
        "--reason",
        "customer called",
      );
      expect(approved).toMatchObject({ status: "completed", executionId, result: 101 });
      const entry = (await runtime.execution(executionId))?.log[1];
      expect(entry?.decision).toMatchObject({ approved: true, by: "dana", reason: "customer called" });

      const again = await run("approve", executionId);
      expect(again.code).toBe(4);
      expect(problemLine(again)).toMatch(
        new RegExp(
          `^codemode: execution ${executionId}: seq 1 \\(tickets\\.create\\) was already approved by dana at \\d\\d:\\d\\d:\\d\\d \\(.+\\) \\("customer called"\\); the run is now completed; see: codemode show ${executionId}$`,
        ),
      );
      const againJson = await run("approve", executionId, "--json");
      expect(JSON.parse(againJson.stdout)).toMatchObject({ error: { exitCode: 4, code: "NOT_PAUSED" } });

      const human = await run("approve", await paused(), "--by", "dana");
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^Approved seq 1 \(tickets\.create\) of .+; the run completed\.\nResult: 101\n$/);
    },
    TIMEOUT,
  );

  it(
    "reject ends the run rejected (the pending seq found by itself); rollback reverts the applied ticket and skips what has no revert",
    async () => {
      const toReject = await paused();
      const rejected = await json<{ rejected: boolean; seq: number; status: string }>(
        "reject",
        toReject,
        "--by",
        "sam",
        "--reason",
        "duplicate",
      );
      expect(rejected).toMatchObject({ rejected: true, seq: 1, status: "rejected" });
      expect((await runtime.execution(toReject))?.status).toBe("rejected");
      const late = await run("reject", toReject, "--seq", "1");
      expect(late.code).toBe(4);
      expect(problemLine(late)).toContain("was already rejected by sam");

      const toRollBack = await paused();
      await runtime.approve({ executionId: toRollBack });
      const report = await json<RollbackReport>("rollback", toRollBack, "--by", "sam", "--reason", "wrong ticket");
      expect(report).toMatchObject({ by: "sam", status: "rolled_back", reverted: [1], skipped: [0], failed: [] });
      // R-RB-1: who rolled back, and why, stays with the reverted call, and show says it.
      const reverted = (await runtime.execution(toRollBack))?.log[1];
      expect(reverted).toMatchObject({ state: "reverted", revert: { by: "sam", reason: "wrong ticket" } });
      expect((await run("show", toRollBack)).stdout).toMatch(/reverted by sam .*: wrong ticket/);
      const human = await run("rollback", toRollBack);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain("Nothing was reverted");
    },
    TIMEOUT,
  );
}

/** recover, expire, prune, snippets, and ids the store does not hold. */
function maintenanceStories({ json, name, paused, run, store }: StoreCli): void {
  it(
    "recover resumes many runs side by side, within the runtime's maxPassesInFlight",
    async () => {
      const submitted: string[] = [];
      for (let index = 0; index < 12; index++) {
        const result = await runtime.submit({ code: FREE_PROGRAM });
        if ("status" in result) throw new Error(result.error);
        submitted.push(result.executionId);
      }
      const result = await codemode(["--config", CONFIG, "recover", "--json"], {
        CODEMODE_TEST_STORE: store,
        CODEMODE_TEST_NAME: name,
        CODEMODE_TEST_MAX_PASSES: "2",
      });
      expect(result.code, result.stderr).toBe(0);
      const recovered = JSON.parse(result.stdout) as Outcome[];
      expect(recovered.map((outcome) => outcome.executionId).sort()).toEqual([...submitted].sort());
      for (const outcome of recovered) expect(outcome).toMatchObject({ status: "completed", result: 1 });
    },
    TIMEOUT,
  );

  it(
    "expire, recover, prune and snippets",
    async () => {
      const old = await paused();
      const expired = await json<{ expired: string[] }>("expire", "--max-age", "0s");
      expect(expired.expired).toContain(old);
      expect((await runtime.execution(old))?.status).toBe("rejected");

      // A submitted run no worker has started: recover gives it its first pass.
      const submitted = await runtime.submit({ code: FREE_PROGRAM });
      expect("status" in submitted).toBe(false);
      const recovered = await json<Outcome[]>("recover");
      expect(recovered).toEqual([
        expect.objectContaining({
          executionId: (submitted as { executionId: string }).executionId,
          status: "completed",
          result: 1,
        }),
      ]);
      expect(await json<Outcome[]>("recover")).toEqual([]);

      const source = await runtime.execute({ code: FREE_PROGRAM });
      await runtime.saveSnippet("count-closed", {
        executionId: source.executionId,
        description: "Counts closed tickets",
      });
      const snippets = await json<Snippet[]>("snippets");
      expect(snippets.map((snippet) => [snippet.name, snippet.description, snippet.connectors])).toEqual([
        ["count-closed", "Counts closed tickets", ["tickets"]],
      ]);

      const finishedBefore = (
        await runtime.executions({ status: ["completed", "rejected", "rolled_back", "error"], limit: 1000 })
      ).items.length;
      expect(finishedBefore).toBeGreaterThan(1);
      const pruned = await json<{ removed: number; keep: number }>("prune", "--keep", "1");
      expect(pruned).toEqual({ removed: finishedBefore - 1, keep: 1 });
      expect(
        (await runtime.executions({ status: ["completed", "rejected", "rolled_back", "error"], limit: 1000 })).items,
      ).toHaveLength(1);
      expect((await json<{ removed: number }>("prune", "--keep", "1")).removed).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "an unknown id says so in one line, with what to do (exit 3), for every command that takes one",
    async () => {
      const unknown = randomUUID();
      for (const command of [
        ["show", unknown],
        ["approve", unknown],
        ["reject", unknown],
        ["rollback", unknown],
        ["recover", unknown],
      ]) {
        const result = await run(...command);
        expect(result.code, command.join(" ")).toBe(3);
        expect(problemLine(result)).toBe(
          `codemode: no execution ${unknown} in the store; list them with: codemode executions`,
        );
        expect(result.stdout).toBe("");
      }
    },
    TIMEOUT,
  );
}
