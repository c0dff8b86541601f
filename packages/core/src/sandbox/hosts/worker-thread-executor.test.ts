/**
 * The worker-thread executor (`sandboxThreads`): passes run on worker threads, their requests
 * cross back to this thread. The threads run the BUILT sandbox thread (`npm run build` first).
 */
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import type { HostReply, PassRequest, SandboxRequest } from "../executor.js";
import { EXECUTOR_FOR_TESTS, expectFreshIsolates, expectLimitsHold } from "../pass-fixtures.js";
import { createWorkerThreadExecutor, type WorkerThreadExecutor } from "./worker-thread-executor.js";

const value = (text: string): HostReply => ({ kind: "value", value: text });
const request = (code: string, onRequest: PassRequest["onRequest"] = async () => value("1")): PassRequest => ({
  code,
  connectors: { tools: ["ping", "wait"] },
  onRequest,
  timeoutMs: 5_000,
});

/** Worker threads this process starts from now on (Node's `process` "worker" event). */
function watchWorkers(): { started: Worker[]; stop(): void } {
  const started: Worker[] = [];
  const listener = (worker: Worker) => started.push(worker);
  process.on("worker", listener);
  return { started, stop: () => process.off("worker", listener) };
}

/** A host whose "wait" requests stay open until `release()`. */
function heldHost() {
  const waiting: Array<() => void> = [];
  let arrived: () => void = () => undefined;
  let waitingCount = 0;
  const onRequest = (sandboxRequest: SandboxRequest): Promise<HostReply> => {
    if (sandboxRequest.type === "call" && sandboxRequest.method === "wait") {
      waitingCount++;
      arrived();
      return new Promise((resolve) => waiting.push(() => resolve(value('"released"'))));
    }
    return Promise.resolve(value("1"));
  };
  return {
    onRequest,
    /** Resolves once `count` "wait" requests have arrived. */
    waitingFor: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (waitingCount >= count ? resolve() : undefined);
        arrived = check;
        check();
      }),
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

let executor: WorkerThreadExecutor | undefined;
afterEach(async () => {
  await executor?.close();
  executor = undefined;
});

describe("worker-thread executor", () => {
  it("runs a pass on a worker thread: requests reach the host in issue order, replies reach the program", async () => {
    const workers = watchWorkers();
    try {
      executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 1 });
      const seen: string[] = [];
      const result = await executor.runPass(
        request(
          "const [a, b] = await Promise.all([tools.ping({ n: 1 }), tools.ping({ n: 2 })]); return a + b + (await tools.ping({ n: 3 }));",
          async (sandboxRequest) => {
            if (sandboxRequest.type !== "call") return { kind: "error", message: "unexpected" };
            seen.push(`${sandboxRequest.seq}:${sandboxRequest.args}`);
            return value(String(sandboxRequest.seq + 10));
          },
        ),
      );
      expect(result).toMatchObject({ status: "returned", value: "33" });
      expect(seen).toEqual(['0:{"n":1}', '1:{"n":2}', '2:{"n":3}']);
      expect(workers.started).toHaveLength(1);
    } finally {
      workers.stop();
    }
  });

  it("R-SB-1: every pass gets a fresh isolate on its thread: nothing a program leaves behind reaches the next", async () => {
    executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 1, prewarm: 1 });
    await expectFreshIsolates(executor, request, 3);
  });

  it("spreads the passes in flight over its threads, starting each thread once", async () => {
    const workers = watchWorkers();
    try {
      executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 2 });
      const host = heldHost();
      const passes = Array.from({ length: 4 }, () =>
        executor!.runPass(request("await tools.wait({})", host.onRequest)),
      );
      await host.waitingFor(4);
      expect(workers.started).toHaveLength(2);
      host.release();
      for (const result of await Promise.all(passes))
        expect(result).toMatchObject({ status: "returned", value: '"released"' });
      expect(await executor.runPass(request("await tools.ping({})"))).toMatchObject({ status: "returned", value: "1" });
      expect(workers.started).toHaveLength(2);
    } finally {
      workers.stop();
    }
  });

  it("a halt reply ends the pass as halted; a host that throws or rejects answers the program with an error", async () => {
    executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 1 });
    expect(
      await executor.runPass(request("await tools.ping({}); return 'not reached'", async () => ({ kind: "halt" }))),
    ).toMatchObject({ status: "halted" });
    const throwing = await executor.runPass(
      request("try { await tools.ping({}); } catch (error) { return error.message; }", () => {
        throw new Error("the host broke");
      }),
    );
    expect(throwing).toMatchObject({ status: "returned", value: '"the host broke"' });
    const rejecting = await executor.runPass(
      request("try { await tools.ping({}); } catch (error) { return error.message; }", () =>
        Promise.reject(new Error("the host said no")),
      ),
    );
    expect(rejecting).toMatchObject({ status: "returned", value: '"the host said no"' });
  });

  it("R-DV-1: values of megabytes cross between the threads both ways, whole", async () => {
    executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 1 });
    const big = "x".repeat(3_000_000);
    const result = await executor.runPass(
      request(
        "const text = await tools.ping({ size: 1 }); return text.length + ':' + (text === 'x'.repeat(3e6)) + ':' + 'y'.repeat(4e6);",
        async (sandboxRequest) => {
          expect(sandboxRequest).toMatchObject({ type: "call", args: '{"size":1}' });
          return value(JSON.stringify(big));
        },
      ),
    );
    expect(result.status).toBe("returned");
    expect(result.status === "returned" && result.value).toBe(JSON.stringify(`3000000:true:${"y".repeat(4_000_000)}`));
  });

  it("R-SB-3: time and memory limits hold on a thread, and the thread serves the next pass", async () => {
    executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 1, memoryMb: 64 });
    await expectLimitsHold(executor, request);
  });

  it("a thread that dies mid-pass fails its passes with SANDBOX_ERROR, and the next pass runs on a new thread", async () => {
    const workers = watchWorkers();
    try {
      executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 1 });
      const host = heldHost();
      const running = executor.runPass(request("await tools.wait({})", host.onRequest));
      await host.waitingFor(1);
      // Ended from outside once the program waits: isolated-vm cannot tear a thread down while
      // its isolate is still inside a call into it (the executor itself only ends threads that
      // stopped answering, and never waits on that).
      await new Promise((resolve) => setTimeout(resolve, 200));
      await workers.started[0]!.terminate();
      expect(await running).toMatchObject({
        status: "failed",
        code: "SANDBOX_ERROR",
        error: expect.stringMatching(/sandbox thread ended/),
      });
      expect(await executor.runPass(request("await tools.ping({})"))).toMatchObject({ status: "returned", value: "1" });
      expect(workers.started).toHaveLength(2);
    } finally {
      workers.stop();
    }
  });

  it("close() ends the passes in flight with a failure and the threads; a closed executor still answers", async () => {
    const workers = watchWorkers();
    try {
      executor = createWorkerThreadExecutor({ engine: EXECUTOR_FOR_TESTS, threads: 2 });
      const host = heldHost();
      const running = [
        executor.runPass(request("await tools.wait({})", host.onRequest)),
        executor.runPass(request("while (true) {}")),
      ];
      await host.waitingFor(1);
      const exits = workers.started.map((worker) => new Promise((resolve) => worker.once("exit", resolve)));
      await executor.close();
      for (const result of await Promise.all(running))
        expect(result).toMatchObject({ status: "failed", code: "SANDBOX_ERROR" });
      expect(await Promise.all(exits)).toHaveLength(2);
      expect(await executor.runPass(request("'after close'"))).toMatchObject({
        status: "returned",
        value: '"after close"',
      });
    } finally {
      workers.stop();
    }
  });

  it("refuses a number of threads that is not a whole number from 1 to 64", () => {
    for (const threads of [0, 1.5, 65, Number.NaN])
      expect(() => createWorkerThreadExecutor({ threads })).toThrow(/threads must be a whole number from 1 to 64/);
  });
});
