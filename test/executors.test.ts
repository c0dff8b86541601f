/**
 * R-SB-7: two executors, isolated-vm and QuickJS in WebAssembly, behind one runtime. The runtime
 * picks isolated-vm where it loads and QuickJS otherwise, saying why once; `executor` and
 * `CODEMODE_EXECUTOR` choose. The log does not depend on the executor: a run paused under one
 * completes under the other, both ways, on every store. Child processes run without isolated-vm
 * (a resolve hook hides it, as on a host where the optional peer is not installed).
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";
import { expectStatus, STORES, serviceCheck } from "./four-stores-fixtures.ts";

const run = promisify(execFile);

/** What a child process prints. */
interface Printed {
  outcome: Outcome;
  warnings: string[];
  atStart: string;
  sandbox: string;
}
const HIDE = fileURLToPath(new URL("./executor-processes/hide-isolated-vm.mjs", import.meta.url));
const CHILD = fileURLToPath(new URL("./executor-processes/quickstart-run.ts", import.meta.url));

/** The shop program: reads, then an order that needs approval, then more reads after it. */
const PROGRAM = `async () => {
  const found = await shop.search({ query: "mug" });
  const stamp = Date.now() + ":" + Math.random().toFixed(6) + ":" + crypto.randomUUID();
  const order = await shop.order({ sku: found[0].sku, stamp });
  const again = await shop.search({ query: "lid" });
  return { order, again: again[0].sku, stamp };
}`;

function shopConnector(ran: string[]) {
  return defineConnector({
    name: "shop",
    tools: {
      search: {
        readOnly: true,
        execute: async (args: { query: string }) => {
          ran.push(`search ${args.query}`);
          return [{ sku: `${args.query}-1` }];
        },
      },
      order: {
        requiresApproval: true,
        execute: async (args: { sku: string; stamp: string }) => {
          ran.push(`order ${args.sku}`);
          return { ordered: args.sku, stamp: args.stamp };
        },
      },
    },
  });
}

for (const store of STORES) {
  describe(`a run moves between executors on ${store.name}`, () => {
    const cannotRun = serviceCheck(store);
    const opened: Array<{ close(): Promise<unknown> }> = [];
    afterEach(async () => {
      for (const each of opened.splice(0).reverse()) await each.close().catch(() => undefined);
    });

    for (const [first, second] of [
      ["isolated-vm", "quickjs"],
      ["quickjs", "isolated-vm"],
    ] as const) {
      it(`R-SB-7: paused under ${first}, approved and completed under ${second}, replaying what was recorded`, async () => {
        if (cannotRun()) return;
        const storage = store.open(`codemode-executors-${randomUUID().slice(0, 8)}`);
        opened.push(storage);
        const ran: string[] = [];
        const pausing = createCodemodeRuntime({ connectors: [shopConnector(ran)], storage, executor: first });
        opened.unshift(pausing);
        const paused = await pausing.execute({ code: PROGRAM });
        expectStatus(paused, "paused");
        const stamp = (paused.pending[0]!.args as { stamp: string }).stamp;

        const resuming = createCodemodeRuntime({ connectors: [shopConnector(ran)], storage, executor: second });
        opened.unshift(resuming);
        const done = await resuming.approve({ executionId: paused.executionId });
        expectStatus(done, "completed");
        // The clock, Math.random and crypto replayed: the approved call got what was asked.
        expect(done.result).toEqual({ order: { ordered: "mug-1", stamp }, again: "lid-1", stamp });
        expect(ran).toEqual(["search mug", "order mug-1", "search lid"]);
        expect(done.calls?.map((call) => [call.seq, call.state])).toEqual([
          [0, "applied"],
          [1, "applied"],
          [2, "applied"],
        ]);
      });
    }
  });
}

describe("choosing the executor", () => {
  it('R-SB-7: executor "quickjs" runs programs with the same outcomes', async () => {
    const runtime = createCodemodeRuntime({ connectors: [shopConnector([])], executor: "quickjs" });
    try {
      expect(runtime.load().sandbox).toBe("quickjs");
      const outcome: Outcome = await runtime.execute({
        code: "async () => (await shop.search({ query: 'a' }))[0].sku",
      });
      expect(outcome).toMatchObject({ status: "completed", result: "a-1" });
      expect(runtime.load().sandbox).toBe("quickjs");
      const failed = await runtime.execute({ code: "async () => { throw new TypeError('nope'); }" });
      expect(failed).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
      expect((failed as { error: string }).error).toContain("TypeError: nope");
    } finally {
      await runtime.close();
    }
  });

  it("R-SB-7: QuickJS runs on sandbox threads by default: a program that loops holds neither this thread nor a cancel", async () => {
    const runtime = createCodemodeRuntime({ executor: "quickjs", limits: { timeoutMs: 30_000 } });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      const submitted = await runtime.submit({ code: "async () => { for (;;) {} }" });
      if ("status" in submitted) throw new Error(submitted.error);
      const running = runtime.recover({ executionId: submitted.executionId });
      while (runtime.load().passesInFlight === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const before = ticks;
      // This thread's timers run while the program loops on its sandbox thread.
      while (ticks < before + 5) await new Promise((resolve) => setTimeout(resolve, 10));
      // The loop reads no message, but its interrupt handler reads the abort board.
      expect(await runtime.cancel({ executionId: submitted.executionId })).toMatchObject({ result: "cancelled" });
      const [outcome] = await running;
      expect(outcome).toMatchObject({ status: "error", code: "CANCELLED" });
      expect(await runtime.execute({ code: "async () => 3" })).toMatchObject({ status: "completed", result: 3 });
    } finally {
      clearInterval(ticker);
      await runtime.close();
    }
  });

  it("R-SB-7: a bad executor option or CODEMODE_EXECUTOR value is refused at creation, naming it", () => {
    expect(() => createCodemodeRuntime({ executor: "v8" as never })).toThrow(
      /executor must be "isolated-vm", "quickjs"/,
    );
    const saved = process.env.CODEMODE_EXECUTOR;
    process.env.CODEMODE_EXECUTOR = "wasm";
    try {
      expect(() => createCodemodeRuntime({})).toThrow(/CODEMODE_EXECUTOR must be isolated-vm or quickjs; got "wasm"/);
    } finally {
      if (saved === undefined) delete process.env.CODEMODE_EXECUTOR;
      else process.env.CODEMODE_EXECUTOR = saved;
    }
  });

  it("R-SB-7: without isolated-vm the runtime picks QuickJS, knows it before any pass and says why once, when a program first runs; a new process approves the run", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "codemode-executors-")), "runs.sqlite");
    const env = { ...process.env, CODEMODE_TEST_STORE: file, CODEMODE_EXECUTOR: "" };
    const child = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, ["--import", HIDE, CHILD, ...args], { env });
      return JSON.parse(stdout.trim().split("\n").at(-1) as string) as Printed;
    };
    // A process that runs no program says nothing about sandboxes, yet knows which it would use.
    const listing = await child("list");
    expect([listing.outcome, listing.warnings, listing.atStart]).toEqual([0, [], "quickjs"]);
    const first = await child("pause");
    expectStatus(first.outcome, "paused");
    expect([first.atStart, first.sandbox]).toEqual(["quickjs", "quickjs"]);
    expect(first.warnings).toEqual([
      expect.stringMatching(
        /^\[codemode\] sandbox: QuickJS in WebAssembly, because isolated-vm does not load here \(Cannot find package 'isolated-vm'/,
      ),
    ]);
    const second = await child("approve", first.outcome.executionId);
    expectStatus(second.outcome, "completed");
    expect(second.outcome.result).toEqual({ ordered: "mug-1" });
  }, 60_000);

  it("R-SB-7: with isolated-vm present the runtime uses it and says nothing", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "codemode-executors-")), "runs.sqlite");
    const { stdout } = await run(process.execPath, [CHILD, "pause"], {
      env: { ...process.env, CODEMODE_TEST_STORE: file, CODEMODE_EXECUTOR: "" },
    });
    const printed = JSON.parse(stdout.trim().split("\n").at(-1) as string) as Printed;
    expectStatus(printed.outcome, "paused");
    expect(printed.warnings).toEqual([]);
    expect([printed.atStart, printed.sandbox]).toEqual(["isolated-vm", "isolated-vm"]);
  }, 60_000);
});
