/**
 * The hostile-program corpus (hostile-programs.ts) on the default host, sandbox processes
 * (R-SB-8), with both engines. The acceptance: for each program, the runtime's process
 * lives, the pass ends MEMORY_LIMIT, TIMEOUT or SANDBOX_CRASHED within its deadline + 1 s,
 * `runtime.cancel` ends it within 1 s, and the next pass runs.
 *
 * Each runtime's process is a child (run-hostile.ts, importing the BUILT packages: run
 * `npm run build` first) that runs a batch of the corpus one program after another, each followed
 * by a benign pass; a second set of children cancels each program 300 ms after it started. A
 * child that died or hung is reported against the program it was running, and a fresh child
 * runs the rest of its batch.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaseResult, limiter, runCorpus, saveReport, WIDTH } from "./hostile-child.ts";
import { HOSTILE_PROGRAMS, LIMITS } from "./hostile-programs.ts";

const ENGINES = ["isolated-vm", "quickjs"] as const;
/** The codes a hostile pass may end with on the default host. */
const CONTAINED = ["MEMORY_LIMIT", "TIMEOUT", "SANDBOX_CRASHED"];
/**
 * The in-sandbox Array guard (install-array-guard.ts) may refuse a liar with a RangeError instead
 * of handing the built-in a snapshot of its length: a pass that does not catch it ends
 * PROGRAM_ERROR (the program's own uncaught error), at once, naming the refusal. That is the only PROGRAM_ERROR accepted here.
 */
const GUARD_REFUSAL = /RangeError: Array\.prototype\.\w+ was called on \d+ elements; in this sandbox it takes at most/;
const CANCEL_AFTER_MS = 300;
/** A child that reports nothing for this long is killed: it hung (the deadline plus 10 s). */
const CAP_MS = LIMITS.timeoutMs + 10_000;

const results = new Map<string, { ended: Map<string, CaseResult>; cancelled: Map<string, CaseResult> }>();

beforeAll(async () => {
  // Every case of this file shares one budget of children at once.
  const limit = limiter(WIDTH);
  const corpus = { host: "process", ...LIMITS, programs: HOSTILE_PROGRAMS, batch: 10, capMs: CAP_MS } as const;
  await Promise.all(
    ENGINES.map(async (engine) => {
      const [ended, cancelled] = await Promise.all([
        runCorpus({ ...corpus, engine }, limit),
        runCorpus({ ...corpus, engine, cancelAfterMs: CANCEL_AFTER_MS }, limit),
      ]);
      results.set(engine, { ended, cancelled });
    }),
  );
}, 900_000);

afterAll(() => {
  saveReport(
    "default-host",
    Object.fromEntries(
      [...results].map(([engine, cases]) => [
        engine,
        {
          ended: Object.fromEntries(cases.ended),
          cancelled: Object.fromEntries(cases.cancelled),
        },
      ]),
    ),
  );
});

/**
 * The run of `name`, once the runtime's process is known to have outlived it and, once closed,
 * exited 0 (a failure names the program, and says how the process died or hung, with its stderr).
 */
function runOf(cases: Map<string, CaseResult>, name: string) {
  const result = cases.get(name);
  // Says which program took the runtime's process down (or held it past the cap), and how.
  expect(result, `no result for ${name}`).toBeDefined();
  expect({ name, ...result, run: undefined }).toEqual({ name, run: undefined });
  return result!.run!;
}

for (const engine of ENGINES) {
  describe(`default host (sandbox processes), ${engine}`, () => {
    for (const program of HOSTILE_PROGRAMS) {
      it(`R-SB-8: ${program.name}: this process lives, the pass ends as data within its deadline + 1 s, and the next pass runs`, () => {
        const run = runOf(results.get(engine)!.ended, program.name);
        const { outcome } = run;
        expect(outcome.status).toBe("error");
        if (outcome.code === "PROGRAM_ERROR") expect(outcome.error).toMatch(GUARD_REFUSAL);
        else expect(CONTAINED).toContain(outcome.code);
        expect(outcome.ms).toBeLessThanOrEqual(LIMITS.timeoutMs + 1_000);
        expect(run.benign).toMatchObject({ status: "completed", result: 42 });
      });

      it(`R-SB-8: ${program.name}: runtime.cancel ends it within 1 s, CANCELLED, and the next pass runs`, () => {
        const run = runOf(results.get(engine)!.cancelled, program.name);
        // A liar the guard refuses ends at once, before there is anything to cancel.
        if (run.outcome.code === "PROGRAM_ERROR" && GUARD_REFUSAL.test(run.outcome.error ?? "")) return;
        // One that reached its limit first (QuickJS sorting a million numbers at 64 MB ends MEMORY_LIMIT
        // in 250–320 ms) had ended, contained, by the time the cancel was asked: nothing was left to cancel.
        if (run.cancel?.result === "no running execution") {
          expect(CONTAINED).toContain(run.outcome.code);
          expect(run.outcome.ms).toBeLessThanOrEqual(CANCEL_AFTER_MS + 1_000);
          expect(run.benign).toMatchObject({ status: "completed", result: 42 });
          return;
        }
        expect(run.cancel?.result).toBe("cancelled");
        expect(run.cancel!.ms).toBeLessThanOrEqual(1_000);
        expect(run.outcome).toMatchObject({ status: "error", code: "CANCELLED" });
        expect(run.benign).toMatchObject({ status: "completed", result: 42 });
      });
    }
  });
}
