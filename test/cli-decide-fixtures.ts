/**
 * What the tests of `codemode approve`, `deny`, `decide` and `cancel` on batched pauses share: the
 * programs that pause, and the file's tickets runtime over a SQLite store with the `codemode` bin
 * (a child process of the built package) run against it as operator "ops".
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { CodemodeRuntime, ExecutionState } from "@codemode/core";
import { afterAll, beforeAll, expect } from "vitest";
import { CONFIG, codemode, scratchDirectory } from "./cli-fixtures/run-cli.ts";
import { openTicketsRuntime } from "./cli-fixtures/tickets.ts";

/** Opens two tickets at once: one pause with both pending. */
export const TWO_TICKETS = `async () => Promise.all([tickets.create({ title: "A" }), tickets.create({ title: "B" })])`;

/** Two tickets at once, each outcome kept: a denial of one does not end the run. */
export const TWO_SETTLED = `async () => (await Promise.allSettled([tickets.create({ title: "A" }), tickets.create({ title: "B" })]))
  .map((settled) => settled.status === "fulfilled" ? settled.value.title : settled.reason.name + ": " + settled.reason.message)`;

/** One ticket, and the title the tool received. */
export const ONE_TITLE = `async () => (await tickets.create({ title: "asked", priority: "low" })).title`;

/** One ticket; a denial is caught and returned. */
export const CAUGHT = `async () => {
  try { await tickets.create({ title: "A" }); return "created"; }
  catch (error) { return error.name + ": " + error.message; }
}`;

/** Three tickets one after another: three pauses, unless a grant approves the later ones. */
export const THREE_IN_TURN = `async () => { const titles = []; for (const title of ["A", "B", "C"]) titles.push((await tickets.create({ title })).title); return titles; }`;

/** A reason that, printed raw, would set the clipboard (OSC 52) and clear the screen. */
export const HOSTILE_REASON = "\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007\u001b[2J not today";

/** The raw control characters none of the output may hold. */
export const RAW_CONTROLS = ["\u001b", "\u0007"];

/**
 * The tickets runtime over a SQLite file in the file's scratch folder, opened before its tests
 * (handed to `onOpened`) and closed after them; `cli` runs the `codemode` bin against the same
 * store, `paused` runs a program that must pause and returns its id, `states` reads each log
 * entry's `[seq, state]`.
 */
export function useDecideCli(onOpened?: (runtime: CodemodeRuntime) => void) {
  const directory = scratchDirectory();
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
    onOpened?.(runtime);
  });
  afterAll(() => close());
  return { directory, cli, paused, execution, states };
}
