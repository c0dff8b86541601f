/**
 * Hardening, round two, on the operator's terminal: what the store holds is hostile input to the
 * screen `codemode` draws on. The `codemode` bin runs in a real terminal (tmux), and the test reads
 * what the screen shows. Needs `npm run build` first.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openTicketsRuntime } from "./cli-fixtures/tickets.ts";

const BIN = fileURLToPath(new URL("../packages/cli/dist/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./cli-fixtures/codemode.config.ts", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "codemode-cli-screen-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const ESC = "\u001b";
/**
 * A program whose comment, printed raw, erases the line above and writes a wire to another
 * account in its place, then hides what follows; and a right-to-left override that reverses a
 * reader's view of an account number.
 */
const HOSTILE_CODE = `async () => {
  // ${ESC}[1A${ESC}[2K#1 tickets.create  pending  to account 999-EVIL${ESC}[8m
  // account \u202e1234-5678\u202c
  const open = await tickets.list({ status: "open" });
  return (await tickets.create({ title: "Refund " + open[0].customer })).id;
}`;

/** Runs `codemode` in a detached tmux session and answers what its screen shows once it ended. */
function screenOf(args: string[], env: Record<string, string>): string {
  const session = `codemode-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const script = join(directory, `${session}.sh`);
  const exports = Object.entries(env)
    .map(([key, value]) => `export ${key}=${JSON.stringify(value)}`)
    .join("\n");
  const done = join(directory, `${session}.done`);
  writeFileSync(
    script,
    `${exports}\nexport FORCE_COLOR=1\n${JSON.stringify(process.execPath)} ${[BIN, ...args].map((arg) => JSON.stringify(arg)).join(" ")}\ntouch ${JSON.stringify(done)}\nsleep 30\n`,
  );
  execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "320", "-y", "80", `bash ${JSON.stringify(script)}`]);
  try {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        execFileSync("test", ["-e", done]);
        break;
      } catch {
        execFileSync("sleep", ["0.2"]);
      }
    }
    return execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" });
  } finally {
    execFileSync("tmux", ["kill-session", "-t", session]);
  }
}

describe("hardening, CLI: the operator's terminal shows the store's data, it does not obey it (finding 6)", () => {
  it("codemode show --full: escape sequences in the code and in who decided and why are shown, not run; the pending row stays as it is", {
    timeout: 60_000,
  }, async () => {
    const store = `sqlite:${join(directory, "screen.sqlite")}`;
    const { runtime, close } = openTicketsRuntime(store, "screen");
    try {
      const paused = await runtime.execute({ code: HOSTILE_CODE });
      expect(paused.status).toBe("paused");
      const decided = await runtime.execute({ code: HOSTILE_CODE });
      await runtime.reject({
        executionId: decided.executionId,
        seq: 1,
        by: `mallory${ESC}[2K${ESC}[1A`,
        reason: `fine\n#2 tickets.create  applied  approved by the CFO${ESC}[8m`,
      });

      const screen = screenOf(["--config", CONFIG, "show", paused.executionId, "--full"], {
        CODEMODE_TEST_STORE: store,
        CODEMODE_TEST_NAME: "screen",
      });
      // The real pending call is on screen, and the forged line is shown as text with its escapes visible.
      expect(screen.split("\n").filter((line) => /^#1 tickets\.create\s+pending/.test(line))).toHaveLength(1);
      expect(screen).toContain("\\u{1b}[1A\\u{1b}[2K#1 tickets.create  pending  to account 999-EVIL\\u{1b}[8m");
      expect(screen).toContain("account \\u{202e}1234-5678\\u{202c}");
      // Nothing after the comment was hidden: the rest of the program is on screen.
      expect(screen).toContain("return (await tickets.create");

      const table = screenOf(["--config", CONFIG, "show", decided.executionId], {
        CODEMODE_TEST_STORE: store,
        CODEMODE_TEST_NAME: "screen",
      });
      expect(table).toContain("rejected by mallory\\u{1b}[2K\\u{1b}[1A");
      expect(table).toContain("fine\\u{a}#2 tickets.create  applied  approved by the CFO\\u{1b}[8m");
      // The forged row did not become a row of its own.
      expect(table.split("\n").filter((line) => line.trimStart().startsWith("#2 tickets.create"))).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe("hardening, CLI: a config found in the working directory is named (finding 13)", () => {
  it("without --config, codemode says which module it loaded from the working directory", { timeout: 60_000 }, () => {
    const project = mkdtempSync(join(directory, "project-"));
    writeFileSync(join(project, "codemode.config.mjs"), `export { default } from ${JSON.stringify(CONFIG)};\n`);
    const run = spawnSync(process.execPath, [BIN, "executions", "--json"], {
      cwd: project,
      env: {
        ...process.env,
        CODEMODE_TEST_STORE: `sqlite:${join(project, "runs.sqlite")}`,
        CODEMODE_TEST_NAME: "found",
        CODEMODE_CONFIG: "",
      },
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ items: [] });
    expect(run.stderr).toContain(
      "codemode: loaded codemode.config.mjs from the working directory (--config names another)",
    );
  });
});
