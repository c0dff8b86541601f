/**
 * A vitest reporter that prints, at the end of a run, the ten test files that took longest (their
 * tests and hooks plus importing them), so a slow file shows where it appears, not months later.
 * Registered beside the default reporter in vitest.config.ts.
 */
import type { Reporter, TestModule } from "vitest/node";

const SHOWN = 10;

export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const files = testModules.map((module) => {
      const diagnostic = module.diagnostic();
      return { file: module.relativeModuleId, ms: diagnostic.collectDuration + diagnostic.duration };
    });
    if (files.length === 0) return;
    files.sort((a, b) => b.ms - a.ms);
    const lines = files.slice(0, SHOWN).map(({ file, ms }) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
    process.stdout.write(`\nThe ${Math.min(SHOWN, files.length)} slowest test files:\n${lines.join("\n")}\n`);
  }
}
