/**
 * SPEC §15 "host memory held per paused execution: 0 (everything lives in the store)": a host
 * idle after a burst of pauses keeps nothing of them. Measured in a child process of its own
 * (`--expose-gc`, the BUILT packages, a SQLite store, so the log lives outside the heap); a
 * pass's bridge used to stay reachable from isolated-vm's callbacks, with the whole log, until
 * the host ran isolated-vm work again.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const HOLD = fileURLToPath(new URL("./memory-processes/hold.ts", import.meta.url));
const directory = mkdtempSync(join(tmpdir(), "codemode-held-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("host memory of paused executions", () => {
  it("SPEC §15: 60 paused executions with 200 KB logs leave no log in the idle host's heap", {
    timeout: 120_000,
  }, () => {
    const paused = 60;
    const output = execFileSync(
      process.execPath,
      ["--expose-gc", HOLD, join(directory, "held.sqlite"), String(paused)],
      { encoding: "utf8" },
    );
    const report = JSON.parse(output.trim().split("\n").at(-1)!) as {
      warm: number;
      paused: number;
      logBytesPerExecution: number;
    };
    const heldPerExecution = (report.paused - report.warm) / paused;
    console.log(
      `heap held per paused execution: ${Math.round(heldPerExecution)} bytes (its log: ${report.logBytesPerExecution} bytes of results)`,
    );
    // Holding the logs would be ~200 KB each; what remains is isolated-vm's small wrappers.
    expect(heldPerExecution).toBeLessThan(report.logBytesPerExecution / 10);
  });
});
