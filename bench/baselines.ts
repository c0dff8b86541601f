/**
 * Baseline "A" of SPEC §15: a bare isolated-vm run of a program, with nothing of this library.
 * Fresh Isolate + context + compileScript + run, host functions bridged with a `Reference`
 * called via `applySyncPromise` (the host returns an `ExternalCopy` the isolate `.copy()`s),
 * dispose. It has no value codec, no log, no replay, no watchdog: the least a sandbox can do.
 */
import ivm from "isolated-vm";
import type { BenchProgram } from "./programs.ts";

const MEMORY_MB = 128;
const TIMEOUT_MS = 10_000;

/** Source of the script A compiles: connector globals, then the program, resolving to JSON text. */
function bareSource(program: BenchProgram): string {
  const connectors = Object.entries(program.connectors)
    .map(([name, methods]) => {
      const members = methods
        .map(
          (method) =>
            `${JSON.stringify(method)}: async (args) => __call.applySyncPromise(undefined, [${JSON.stringify(name)}, ${JSON.stringify(method)}, JSON.stringify(args)]).copy()`,
        )
        .join(",\n    ");
      return `const ${name} = {\n    ${members}\n  };`;
    })
    .join("\n  ");
  return `(function () {
  const __call = globalThis.__call;
  delete globalThis.__call;
  ${connectors}
  return (async () => {${program.body}
  })().then((value) => JSON.stringify(value));
})()`;
}

/** A runner for one program; each call is one cold run in a fresh isolate. */
export function bareIsolatedVm(program: BenchProgram): () => Promise<string> {
  const source = bareSource(program);
  const host = async (connector: string, method: string, argsText: string | undefined) =>
    new ivm.ExternalCopy(program.answer(connector, method, argsText === undefined ? undefined : JSON.parse(argsText)));
  return async () => {
    const isolate = new ivm.Isolate({ memoryLimit: MEMORY_MB });
    try {
      const context = await isolate.createContext();
      await context.global.set("__call", new ivm.Reference(host));
      const script = await isolate.compileScript(source, { filename: "bare.js" });
      return (await script.run(context, { promise: true, timeout: TIMEOUT_MS })) as string;
    } finally {
      if (!isolate.isDisposed) isolate.dispose();
    }
  };
}
