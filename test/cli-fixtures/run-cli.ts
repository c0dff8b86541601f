import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";

// The `codemode` bin as the CLI tests run it: a child process of the built package (run
// `npm run build` first), with no colours, and the problem line an operator reads.

export const BIN = fileURLToPath(new URL("../../packages/cli/dist/bin.js", import.meta.url));
export const FIXTURES = fileURLToPath(new URL("./", import.meta.url));
export const CONFIG = join(FIXTURES, "codemode.config.ts");
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const TIMEOUT = 120_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function codemode(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    // No colours unless a test asks (vitest sets FORCE_COLOR for itself; a child must not inherit it).
    const base: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
    delete base.FORCE_COLOR;
    const merged = { ...base, ...env };
    for (const key of Object.keys(merged)) if (merged[key] === "") delete merged[key];
    const child = spawn(process.execPath, [BIN, ...args], { env: merged, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The problem line: the last line on stderr (commander or progress may print before it). */
export const problemLine = (run: Run) => run.stderr.trim().split("\n").at(-1) ?? "";

/** A scratch folder for one test file's SQLite stores, removed after the file. */
export function scratchDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), "codemode-cli-"));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}
