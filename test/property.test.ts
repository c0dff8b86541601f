/**
 * Replay property (R-AP-1, R-AP-2, R-RP-3, R-RP-5, R-CON-3): for any small program of reads,
 * writes, gated writes, steps and caught failures, running it with every approval granted up
 * front and running it by pausing at each gated call and approving give the same result and the
 * same effects in the same order; each gated effect is applied exactly once.
 */
import {
  type CodemodeRuntime,
  createCodemodeRuntime,
  defineConnector,
  type LogEntry,
  type Outcome,
} from "@codemode/core";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";

type Operation =
  | { kind: "read"; key: string }
  | { kind: "write"; key: string; value: number }
  | { kind: "gatedWrite"; key: string; value: number }
  | { kind: "step"; name: string }
  | { kind: "failingCall"; key: string };

const keyArbitrary = fc.constantFrom("a", "b", "c");
const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant("read" as const), key: keyArbitrary }),
  fc.record({ kind: fc.constant("write" as const), key: keyArbitrary, value: fc.integer({ min: -5, max: 99 }) }),
  fc.record({ kind: fc.constant("gatedWrite" as const), key: keyArbitrary, value: fc.integer({ min: -5, max: 99 }) }),
  fc.record({ kind: fc.constant("step" as const), name: fc.constantFrom("plan", "stamp", "pick") }),
  fc.record({ kind: fc.constant("failingCall" as const), key: keyArbitrary }),
);
const programArbitrary = fc.array(operationArbitrary, { minLength: 0, maxLength: 8 });

/** The JavaScript statement that runs one operation and pushes what it saw onto `out`. */
function operationSource(operation: Operation): string {
  switch (operation.kind) {
    case "read":
      return `out.push(await store.read({ key: ${JSON.stringify(operation.key)} }));`;
    case "write":
      return `out.push(await store.write({ key: ${JSON.stringify(operation.key)}, value: ${operation.value} }));`;
    case "gatedWrite":
      return `out.push(await store.gatedWrite({ key: ${JSON.stringify(operation.key)}, value: ${operation.value} }));`;
    case "step":
      // The step's value depends on what the program saw so far; on replay fn is skipped.
      return `out.push(await codemode.step(${JSON.stringify(operation.name)}, () => ${JSON.stringify(operation.name)} + ":" + out.length + ":" + JSON.stringify(out).length));`;
    case "failingCall":
      return `try { out.push(await store.fail({ key: ${JSON.stringify(operation.key)} })); } catch (error) { out.push("caught " + error.message); }`;
  }
}

/** The JavaScript source of an async arrow function that runs the operations in order. */
function programSource(operations: Operation[]): string {
  const lines = operations.map(operationSource);
  return `async () => {\n  const out = [];\n  ${lines.join("\n  ")}\n  return out;\n}`;
}

interface AppliedEffect {
  method: string;
  args: unknown;
}

/** One configuration: a runtime reused across runs and the world its tools act on. */
function configuration(gated: boolean) {
  const world = { effects: [] as AppliedEffect[], values: new Map<string, number>() };
  const store = defineConnector({
    name: "store",
    tools: {
      read: {
        execute: async (args: { key: string }) => {
          world.effects.push({ method: "read", args });
          return { key: args.key, value: world.values.get(args.key) ?? null };
        },
      },
      write: {
        execute: async (args: { key: string; value: number }) => {
          world.effects.push({ method: "write", args });
          world.values.set(args.key, args.value);
          return { written: args.key, size: world.values.size };
        },
      },
      gatedWrite: {
        requiresApproval: gated,
        execute: async (args: { key: string; value: number }) => {
          world.effects.push({ method: "gatedWrite", args });
          const previous = world.values.get(args.key) ?? null;
          world.values.set(args.key, args.value * 10);
          return { written: args.key, previous };
        },
      },
      fail: {
        execute: async (args: { key: string }) => {
          world.effects.push({ method: "fail", args });
          throw new Error(`no ${args.key} (${world.values.size} keys)`);
        },
      },
    },
  });
  const runtime = createCodemodeRuntime({ connectors: [store], limits: { timeoutMs: 10_000 } });
  return {
    runtime,
    world,
    reset() {
      world.effects = [];
      world.values = new Map();
    },
  };
}

/** The log without what legitimately differs between the two configurations. */
function comparableLog(log: LogEntry[]) {
  return log.map((entry) => ({
    seq: entry.seq,
    connector: entry.connector,
    method: entry.method,
    args: entry.args,
    state: entry.state,
    result: entry.result,
    error: entry.error,
  }));
}

function describeOutcome(outcome: Outcome): string {
  return JSON.stringify(outcome).slice(0, 800);
}

describe("replay property: approvals up front and approvals by pausing agree", () => {
  const upFront = configuration(false);
  const byPausing = configuration(true);
  const runtimes: CodemodeRuntime[] = [upFront.runtime, byPausing.runtime];

  afterAll(async () => {
    for (const runtime of runtimes) await runtime.close();
  });

  it("same result, same effects in the same order, each gated effect applied once (200 generated programs)", async () => {
    let runs = 0;
    let pauses = 0;
    await fc.assert(
      fc.asyncProperty(programArbitrary, async (operations) => {
        runs += 1;
        const code = programSource(operations);
        const gatedOperations = operations.filter((operation) => operation.kind === "gatedWrite");

        upFront.reset();
        const direct = await upFront.runtime.execute({ code });
        if (direct.status !== "completed")
          throw new Error(`approvals up front did not complete:\n${code}\n${describeOutcome(direct)}`);

        byPausing.reset();
        let outcome = await byPausing.runtime.execute({ code });
        let approvals = 0;
        while (outcome.status === "paused") {
          const action = outcome.pending[0];
          const expected = gatedOperations[approvals];
          if (!action || !expected || expected.kind !== "gatedWrite")
            throw new Error(`unexpected pause:\n${code}\n${describeOutcome(outcome)}`);
          expect(action).toMatchObject({
            connector: "store",
            method: "gatedWrite",
            args: { key: expected.key, value: expected.value },
          });
          // The gated effect has not happened while the execution is paused (R-AP-1).
          expect(byPausing.world.effects.filter((effect) => effect.method === "gatedWrite")).toHaveLength(approvals);
          approvals += 1;
          pauses += 1;
          outcome = await byPausing.runtime.approve({ executionId: outcome.executionId, seq: action.seq });
        }
        if (outcome.status !== "completed")
          throw new Error(`approving each pause did not complete:\n${code}\n${describeOutcome(outcome)}`);

        expect(approvals).toBe(gatedOperations.length);
        expect(outcome.result).toEqual(direct.result);
        expect(byPausing.world.effects).toEqual(upFront.world.effects);
        // Every operation that touches a connector ran exactly once, in program order.
        const connectorOperations = operations.filter((operation) => operation.kind !== "step");
        expect(upFront.world.effects.map((effect) => effect.method)).toEqual(
          connectorOperations.map((operation) => (operation.kind === "failingCall" ? "fail" : operation.kind)),
        );
        expect(byPausing.world.effects.filter((effect) => effect.method === "gatedWrite")).toHaveLength(
          gatedOperations.length,
        );

        const directState = await upFront.runtime.execution(direct.executionId);
        const pausedState = await byPausing.runtime.execution(outcome.executionId);
        expect(comparableLog(pausedState!.log)).toEqual(comparableLog(directState!.log));
        expect(pausedState!.log.filter((entry) => entry.decision?.approved === true)).toHaveLength(
          gatedOperations.length,
        );
      }),
      { numRuns: 200 },
    );
    console.log(`replay property: ${runs} generated programs, ${pauses} pauses approved`);
    expect(runs).toBeGreaterThanOrEqual(200);
    // 200 programs, each run twice and approved pause by pause: 13–25 s here, more with QuickJS.
  }, 120_000);
});
