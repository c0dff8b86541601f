import { describe, expect, it } from "vitest";
import type { HostReply, PassRequest } from "../executor.js";
import { createIsolatedVmExecutor } from "./isolated-vm-executor.js";

const request = (code: string, onRequest: PassRequest["onRequest"], timeoutMs = 2_000): PassRequest => ({
  code,
  connectors: { shop: ["get"] },
  onRequest,
  timeoutMs,
});
const value = async (): Promise<HostReply> => ({ kind: "value", value: "1" });

/**
 * R-SB-3: an isolate is disposed when its pass ends, before the pass answers, however it ended.
 * A deferred disposal waited for the event loop's check phase, which a busy host never reaches,
 * and the process aborted with thousands of dead isolates alive (test/load/run.ts holds the load).
 * With `isolateReuse`, an isolate whose pass ended normally may stay, idle, up to `maxIdle`; one
 * whose pass hit a limit is disposed before the answer all the same.
 */
for (const reuse of [false, { maxIdle: 2 }] as const) {
  describe(`isolates are disposed before the pass answers (isolateReuse: ${JSON.stringify(reuse)})`, () => {
    const idle = reuse ? reuse.maxIdle : 0;
    const endings: Array<{ ending: string; pass: PassRequest; expected: object; keeps?: boolean }> = [
      {
        ending: "completed",
        pass: request("(await shop.get({})) + 1", value),
        expected: { status: "returned", value: "2" },
        keeps: true,
      },
      {
        ending: "paused (halted by the host)",
        pass: request("await shop.get({})", async () => ({ kind: "halt" })),
        expected: { status: "halted" },
        keeps: true,
      },
      {
        ending: "error thrown by the program",
        pass: request("throw new Error('no')", value),
        expected: { status: "failed", code: "PROGRAM_ERROR" },
        keeps: true,
      },
      {
        ending: "timeout of a loop after an await",
        pass: request("await shop.get({}); while (true) {}", value, 300),
        expected: { status: "failed", code: "TIMEOUT" },
      },
      {
        ending: "timeout of a promise that never settles",
        pass: request("await new Promise(() => {})", value, 300),
        expected: { status: "failed", code: "TIMEOUT" },
      },
      {
        ending: "memory limit",
        pass: { ...request("const keep = []; while (true) keep.push(new Array(1e6).fill(7));", value), memoryMb: 16 },
        expected: { status: "failed", code: "MEMORY_LIMIT" },
      },
    ];

    for (const { ending, pass, expected, keeps } of endings) {
      it(`R-SB-3: ${ending}: no isolate outlives the pass's answer${reuse && keeps ? " but one kept warm" : ""}`, async () => {
        const executor = createIsolatedVmExecutor({ isolateReuse: reuse });
        try {
          const result = await executor.runPass(pass);
          expect(result).toMatchObject(expected);
          // Read in the same turn as the answer: nothing was left for a later turn to dispose.
          expect(executor.stats()).toMatchObject({ passesRunning: 0, isolatesLive: reuse && keeps ? 1 : 0 });
        } finally {
          await executor.close();
        }
      });
    }

    it("R-SB-3: closed while passes run: every pass answers and no isolate is left", async () => {
      const executor = createIsolatedVmExecutor({ isolateReuse: reuse });
      const passes = Array.from({ length: 5 }, () =>
        executor.runPass(request("await new Promise(() => {})", value, 10_000)),
      );
      await expect.poll(() => executor.stats().passesRunning === 5 && executor.stats().isolatesLive === 5).toBe(true);
      await executor.close();
      // Some may still be reading their program when the executor closes: never a SYNTAX_ERROR.
      for (const result of await Promise.all(passes))
        expect(result, JSON.stringify(result)).toMatchObject({ status: "failed", code: "SANDBOX_ERROR" });
      expect(executor.stats()).toMatchObject({ passesRunning: 0, isolatesLive: 0 });
    });

    it("R-SB-3: 50 passes at once: the isolates alive never exceed the passes running (and maxIdle warm ones)", async () => {
      const executor = createIsolatedVmExecutor({ isolateReuse: reuse });
      let worst = 0;
      const look = async (): Promise<HostReply> => {
        const { passesRunning, isolatesLive } = executor.stats();
        worst = Math.max(worst, isolatesLive - passesRunning);
        return { kind: "value", value: "1" };
      };
      try {
        const results = await Promise.all(
          Array.from({ length: 50 }, () =>
            // A generous limit: 50 passes at once on a machine running other test files.
            executor.runPass(
              request("let s = 0; for (let i = 0; i < 5; i++) s += await shop.get({}); s", look, 30_000),
            ),
          ),
        );
        for (const result of results)
          expect(result, JSON.stringify(result)).toMatchObject({ status: "returned", value: "5" });
        expect(worst).toBeLessThanOrEqual(idle);
        expect(executor.stats()).toMatchObject({ passesRunning: 0, isolatesLive: idle });
      } finally {
        await executor.close();
      }
    });
  });
}
