/**
 * Runs a whole-program sample the way a reader would: `node sample.ts` under this Node (24, which
 * strips the types), in a working directory of its own so files it creates (`./.codemode/…`) stay
 * apart from the other samples'.
 */
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { markdownLine, type SampleFailure, type SampleModule } from "./check-samples.ts";

/** How long a sample may run: it talks to nothing slower than a local Redis. */
export const SAMPLE_TIMEOUT_MS = 20_000;

/** Answers `undefined` when the program exits 0 in time, else why not, at the sample's Markdown line. */
export function runSample(module: SampleModule): Promise<SampleFailure | undefined> {
  const workingDirectory = join(dirname(module.path), "runs", basename(module.path, ".ts"));
  mkdirSync(workingDirectory, { recursive: true });
  const start = module.segments[0]?.sample ?? { file: module.path, line: 0 };
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [module.path],
      { cwd: workingDirectory, timeout: SAMPLE_TIMEOUT_MS, killSignal: "SIGKILL", env: sampleEnvironment() },
      (error, stdout, stderr) => {
        if (!error) return resolvePromise(undefined);
        const why = error.killed ? `did not exit within ${SAMPLE_TIMEOUT_MS} ms` : `exited with code ${error.code}`;
        const output = withMarkdownLines(`${stdout}${stderr}`.trim(), module);
        resolvePromise({ file: start.file, line: start.line, message: `run: ${why}\n${indent(output)}` });
      },
    );
  });
}

/** The test's environment, minus what would make a sample behave unlike a reader's run. */
function sampleEnvironment(): NodeJS.ProcessEnv {
  const environment = { ...process.env };
  // vitest's own settings (a worker id, a pool) mean nothing to a sample.
  for (const name of Object.keys(environment)) if (name.startsWith("VITEST")) delete environment[name];
  delete environment.NODE_OPTIONS;
  return environment;
}

/** A stack frame `…/README.md--20.ts:12:5` reads as `packages/core/README.md:31`. */
function withMarkdownLines(output: string, module: SampleModule): string {
  const name = basename(module.path).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return output.replace(new RegExp(`(?:file://)?[^\\s(]*${name}:(\\d+)(?::\\d+)?`, "g"), (_match, line: string) => {
    const place = markdownLine(module, Number(line));
    return `${place.file}:${place.line}`;
  });
}

function indent(text: string): string {
  return text
    .split("\n")
    .slice(0, 40)
    .map((line) => `    ${line}`)
    .join("\n");
}
