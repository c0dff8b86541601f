/**
 * What every peer runner shares: the programs, the arguments each tool takes, the sampling loop
 * and the report. A runner only says how its library runs one program (`runPeer`).
 *
 * A runner is started by bench/peers.bench.ts in a process of its own, with its options as JSON
 * in argv[2], and writes its samples as JSON to file descriptor 3 (stdout stays free for the
 * library's own logging).
 */
import { writeFileSync } from "node:fs";
import { check, sampleInterleaved } from "../harness.ts";
import { type BenchProgram, fiveReadsOneWrite, sequentialCalls } from "../programs.ts";

/** Argv[2] of a runner. */
export interface RunnerOptions {
  /** Measured cold passes of fiveReadsOneWrite (after 20 warm-up passes). */
  coldRuns: number;
  /** Measured passes of sequentialCalls(calls) and of sequentialCalls(0), interleaved (after 3 warm-up rounds). */
  callRuns: number;
  /** Calls in the long sequentialCalls pass. */
  calls: number;
}

/** What a runner writes to file descriptor 3: wall-clock milliseconds per pass. */
export interface RunnerReport {
  library: string;
  version: string;
  sandbox: string;
  samples: { cold: number[]; many: number[]; none: number[] };
}

/**
 * The arguments each tool of bench/programs.ts takes, in the order the programs pass them, with
 * their JSON types: libraries that describe tools by a schema, or call them with positional
 * arguments, need it.
 */
export const TOOL_INPUTS: Record<string, Record<string, "number" | "string">> = {
  "crm.getCustomer": { id: "number" },
  "crm.listOrders": { customerId: "number", limit: "number" },
  "crm.getNotes": { customerId: "number" },
  "crm.updateCustomer": { id: "number", tier: "string", noteCount: "number" },
  "inventory.getItem": { sku: "string" },
  "inventory.getStock": { sku: "string" },
  "bench.echo": { i: "number" },
};

/** The tools of a program as `[connector, method, inputs]`. */
export function toolsOf(
  program: BenchProgram,
): [connector: string, method: string, inputs: Record<string, "number" | "string">][] {
  return Object.entries(program.connectors).flatMap(([connector, methods]) =>
    methods.map((method): [string, string, Record<string, "number" | "string">] => {
      const inputs = TOOL_INPUTS[`${connector}.${method}`];
      if (inputs === undefined) throw new Error(`no inputs listed for ${connector}.${method} in bench/peers/runner.ts`);
      return [connector, method, inputs];
    }),
  );
}

/** How a library runs a program: set up once, then each call is one pass, resolving to the result as JSON text. */
export type PrepareProgram = (program: BenchProgram) => Promise<() => Promise<string>>;

/** Runs the programs through `prepare`, checks every result and writes the report to file descriptor 3. */
export async function runPeer(identity: Omit<RunnerReport, "samples">, prepare: PrepareProgram): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? "{}") as RunnerOptions;
  const checked = async (program: BenchProgram) => {
    const pass = await prepare(program);
    return async () => {
      const value = await pass();
      check(
        value === program.expected,
        `${identity.library} returned ${value.slice(0, 300)}, expected ${program.expected}`,
      );
    };
  };
  const cold = await sampleInterleaved(
    { cold: await checked(fiveReadsOneWrite) },
    { warmup: 20, iterations: options.coldRuns },
  );
  const calls = await sampleInterleaved(
    { many: await checked(sequentialCalls(options.calls)), none: await checked(sequentialCalls(0)) },
    { warmup: 3, iterations: options.callRuns },
  );
  const report: RunnerReport = { ...identity, samples: { cold: cold.cold, many: calls.many, none: calls.none } };
  writeFileSync(3, JSON.stringify(report));
}
