/**
 * A host process for the heavy hardening tests (test/hardening-host.test.ts), importing the BUILT
 * packages (run `npm run build` first). It runs hostile programs through a runtime one after the
 * other and reports, as one JSON line on stdout, how each ended and what the host paid: its peak
 * resident memory and the longest stall of its event loop.
 *
 *   echo '{"limits":{"memoryMb":16},"steps":[{"execute":"…"}]}' | node test/hardening-processes/attack.ts
 *
 * A step either executes code or approves the execution a former step paused (`approve`: index).
 */
import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";

export interface AttackConfig {
  limits?: { timeoutMs?: number; memoryMb?: number };
  steps: Array<{ execute: string } | { approve: number }>;
}

export interface StepReport {
  status: string;
  code?: string;
  /** Characters of the error the outcome carries. */
  errorChars: number;
  /** First characters of the error. */
  error?: string;
  result?: unknown;
  logLines: number;
  logChars: number;
  /** Characters of the error kept in the record. */
  storedErrorChars: number;
  /** Characters of console output kept in the record. */
  storedLogChars: number;
  ms: number;
}

export interface AttackReport {
  steps: StepReport[];
  /** Resident memory after the runtime ran a trivial program, before any attack (MB). */
  baselineRssMb: number;
  /** Peak resident memory of the process over its whole life (MB). */
  peakRssMb: number;
  /** Longest gap between two ticks of a 5 ms interval while the steps ran (ms). */
  maxStallMs: number;
}

// The config comes on stdin: programs of a megabyte do not fit in an argument.
let input = "";
for await (const chunk of process.stdin) input += chunk;
const config = JSON.parse(input) as AttackConfig;
const shop = defineConnector({
  name: "shop",
  tools: {
    look: { execute: async (args: unknown) => ({ price: 3, args }) },
    buy: { requiresApproval: true, execute: async () => ({ bought: true }) },
  },
});
const runtime = createCodemodeRuntime({ connectors: [shop], limits: config.limits ?? {} });
await runtime.execute({ code: "1 + 1" });
const baselineRssMb = process.memoryUsage().rss / 1e6;

let maxStallMs = 0;
let lastTick = performance.now();
const ticker = setInterval(() => {
  const now = performance.now();
  maxStallMs = Math.max(maxStallMs, now - lastTick - 5);
  lastTick = now;
}, 5);

const outcomes: Outcome[] = [];
const steps: StepReport[] = [];
for (const step of config.steps) {
  const started = performance.now();
  lastTick = started;
  let outcome: Outcome;
  if ("execute" in step) outcome = await runtime.execute({ code: step.execute });
  else outcome = await runtime.approve({ executionId: outcomes[step.approve]!.executionId });
  outcomes.push(outcome);
  const ms = performance.now() - started;
  const stored = await runtime.execution(outcome.executionId);
  const logs = outcome.logs ?? [];
  const error = outcome.status === "error" ? outcome.error : "";
  steps.push({
    status: outcome.status,
    ...(outcome.status === "error" ? { code: outcome.code, error: error.slice(0, 300) } : {}),
    ...(outcome.status === "completed" ? { result: outcome.result } : {}),
    errorChars: error.length,
    logLines: logs.length,
    logChars: logs.reduce((sum, line) => sum + line.length, 0),
    storedErrorChars: stored?.error?.length ?? 0,
    storedLogChars: (stored?.logs ?? []).reduce((sum, line) => sum + line.length, 0),
    ms,
  });
}
clearInterval(ticker);
await runtime.close();

const report: AttackReport = {
  steps,
  baselineRssMb,
  // maxRSS is in kilobytes, the peak over the process's life.
  peakRssMb: (process.resourceUsage().maxRSS * 1024) / 1e6,
  maxStallMs,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
