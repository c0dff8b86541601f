import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import type { ExecutionIndex, IndexRow } from "../../log/execution-index.js";
import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import { createInProcessLock, type LeaseFence } from "../../log/lock.js";
import type { ExecutionStatus } from "../../outcome.js";
import { createRuntimeContext, type RuntimeContext } from "../context/context.js";
import { afterTransition, complete, expire, pause, resume, rollBack } from "./transition.js";

/** An index that records what it was asked, and can be made to fail. */
function recordingIndex() {
  const puts: Array<{ row: IndexRow; previous: ExecutionStatus | undefined; fence?: LeaseFence }> = [];
  let failing = false;
  const index: ExecutionIndex = {
    put: async (row, previous, fence) => {
      if (failing) throw new Error("index down");
      puts.push({ row, previous, ...(fence ? { fence } : {}) });
    },
    remove: async () => undefined,
    list: async () => [],
    count: async () => 0,
  };
  return { index, puts, fail: () => (failing = true) };
}

function setup(hookLog: string[] = []) {
  const keyv = new Keyv();
  const recorded = recordingIndex();
  const warnings: string[] = [];
  const context: RuntimeContext = createRuntimeContext({
    storage: { keyv: keyv as never, lock: createInProcessLock(), index: { forRuntime: () => recorded.index } },
    connectors: [
      {
        name: "shop",
        tools: { order: { execute: () => 1 } },
        onPassEnd: (_id, status) => void hookLog.push(`passEnd:${status}`),
        disposeExecution: (_id, status) => {
          hookLog.push(`dispose:${status}`);
          throw new Error("dispose failed");
        },
      },
    ],
    logger: { warn: (message) => void warnings.push(message) },
  });
  return { context, ...recorded, warnings };
}

function head(status: ExecutionStatus, extra: Partial<ExecutionHead> = {}): ExecutionHead {
  return {
    id: "e1",
    status,
    createdAt: 1,
    updatedAt: 1,
    connectors: [],
    seqLimit: 32,
    deterministic: true,
    seed: "e1",
    clockMs: 1,
    passes: 1,
    ...extra,
  };
}

/** The lease's holder, as a transition's caller is: its writes go out, its index rows name the lease. */
const holder = {
  write: (_batch: unknown, plain: () => Promise<void>) => plain(),
  fence: { key: "lock-e1", token: "t1" },
};

const pending: StoredEntry = {
  seq: 2,
  connector: "shop",
  method: "order",
  args: "{}",
  requiresApproval: true,
  state: "pending",
  startedAt: 1,
};

describe("named transitions: one status change each", () => {
  it("writes the head with the pending seq and moves the listing row from its previous status", async () => {
    const { context, puts } = setup();
    const running = head("running");
    expect(await pause(context, holder, running, [2, 4])).toEqual({ kind: "pass-end", status: "paused" });
    const stored = await context.store.readHead("e1");
    expect(stored).toMatchObject({ status: "paused", pendingSeq: 2, pendingSeqs: [2, 4] });
    expect(stored!.updatedAt).toBeGreaterThan(1);
    expect(puts).toEqual([
      {
        row: { id: "e1", status: "paused", createdAt: 1, updatedAt: stored!.updatedAt },
        previous: "running",
        fence: holder.fence,
      },
    ]);
  });

  it("closes the pending action when a paused run ends without a decision, in the same write as the head", async () => {
    const { context } = setup();
    // Rewrite the store so we can see the batch: a paused head and its pending entry.
    await context.store.writeHead(holder, head("paused", { pendingSeq: 2 }), { entries: [pending] });
    const paused = (await context.store.readHead("e1"))!;
    expect(await expire(context, holder, paused, "expired while waiting for approval")).toEqual({
      kind: "dispose",
      status: "rejected",
    });
    const [entry] = await context.store.readEntries("e1", [2]);
    expect(entry).toMatchObject({ state: "error", error: "expired while waiting for approval" });
    const stored = await context.store.readHead("e1");
    expect(stored).toMatchObject({ status: "rejected", error: "expired while waiting for approval" });
    expect(stored!.pendingSeq).toBeUndefined();
    expect(stored!.pendingSeqs).toBeUndefined();
  });

  it("resume writes the approved entry with the head and owes no hooks", async () => {
    const { context } = setup();
    const approved: StoredEntry = { ...pending, decision: { approved: true, by: "ann", at: 5 } };
    expect(await resume(context, holder, head("paused", { pendingSeq: 2 }), [approved])).toBeUndefined();
    const [entry] = await context.store.readEntries("e1", [2]);
    expect(entry).toMatchObject({ state: "pending", decision: { approved: true, by: "ann" } });
    const stored = await context.store.readHead("e1");
    expect(stored?.status).toBe("running");
    expect(stored!.pendingSeq).toBeUndefined();
  });

  it("expire ends a running run whose host went away in error, SANDBOX_ERROR", async () => {
    const { context } = setup();
    expect(await expire(context, holder, head("running"), "the host went away")).toEqual({
      kind: "dispose",
      status: "error",
    });
    expect(await context.store.readHead("e1")).toMatchObject({
      status: "error",
      error: "the host went away",
      errorCode: "SANDBOX_ERROR",
    });
  });

  it("rollBack closes a paused run's pending action from the log as loaded", async () => {
    const { context } = setup();
    await context.store.writeHead(holder, head("paused", { pendingSeq: 2 }), { entries: [pending] });
    const paused = (await context.store.readHead("e1"))!;
    const log = new Map([[2, pending]]);
    expect(await rollBack(context, holder, paused, log)).toEqual({ kind: "dispose", status: "rolled_back" });
    const [entry] = await context.store.readEntries("e1", [2]);
    expect(entry).toMatchObject({ state: "error", error: "rolled back before approval" });
  });

  it("a listing that cannot be updated is reported, never turns the change into a failure", async () => {
    const { context, fail, warnings } = setup();
    fail();
    await complete(context, holder, head("running"), { result: "1" });
    expect((await context.store.readHead("e1"))?.status).toBe("completed");
    expect(await context.store.readResult("e1")).toEqual({ result: "1" });
    expect(warnings.join("\n")).toMatch(/e1 is completed, but its listing could not be updated/);
  });

  it("R-RS-1 R-RS-2 R-RS-3: after a pass onPassEnd then dispose; a pause disposes nothing; hook errors are swallowed and reported", async () => {
    const hookLog: string[] = [];
    const { context, warnings } = setup(hookLog);
    await afterTransition(context, "e1", await pause(context, holder, head("running"), [2]));
    await afterTransition(context, "e1", await complete(context, holder, head("running"), {}));
    await afterTransition(context, "e1", await rollBack(context, holder, head("paused"), new Map()));
    expect(hookLog).toEqual(["passEnd:paused", "passEnd:completed", "dispose:completed", "dispose:rolled_back"]);
    expect(warnings.filter((warning) => warning.includes('disposeExecution of connector "shop" threw'))).toHaveLength(
      2,
    );
  });
});
