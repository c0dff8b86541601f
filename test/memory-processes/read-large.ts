/**
 * A host for test/reading-memory.test.ts, importing the BUILT packages: runs `count` large
 * programs at once on four sandbox threads and reports how much the process's peak memory grew.
 *
 *   node test/memory-processes/read-large.ts <count>
 *
 * Each program is 0.9 MB: one `let` of 160,000 names, then `return 1`. Reading it (the host's
 * parse, then V8's parse and compile in the isolate) is nearly all it costs. Prints one line of
 * JSON: the peak resident set before and after, in MB, and the most large programs read at once.
 */
import { createCodemodeRuntime } from "@codemode/core";
// The same module instance the runtime uses: the process's counter of large programs being read.
import { mostReadAtOnce } from "../../packages/core/dist/sandbox/pass/reading-gate.js";

const count = Number(process.argv[2]);
if (!Number.isSafeInteger(count) || count < 1) throw new Error("usage: node read-large.ts <count>");

const names = Array.from({ length: 160_000 }, (_, index) => `_${index.toString(36)}`);
const program = (variant: number) => `async () => {\n  let ${names.join(",")};\n  return ${variant};\n}`;
const peakMb = () => process.resourceUsage().maxRSS / 1024;

const runtime = createCodemodeRuntime({ sandboxThreads: 4, limits: { timeoutMs: 120_000 } });
// Start the threads and read a small program on each, so what follows measures reading alone.
await Promise.all(Array.from({ length: 4 }, () => runtime.execute({ code: "async () => 1" })));
const before = peakMb();
const outcomes = await Promise.all(
  Array.from({ length: count }, (_, variant) => runtime.execute({ code: program(variant) })),
);
const after = peakMb();
for (const [variant, outcome] of outcomes.entries())
  if (outcome.status !== "completed" || outcome.result !== variant)
    throw new Error(`expected ${variant}, got ${JSON.stringify(outcome).slice(0, 300)}`);
console.log(
  JSON.stringify({
    beforeMb: Math.round(before),
    afterMb: Math.round(after),
    mostReadAtOnce: mostReadAtOnce(),
    programChars: program(0).length,
  }),
);
await runtime.close();
