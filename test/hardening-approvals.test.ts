/**
 * Issue 17.7–17.9: the approver decides on what the tool will really get. The approval rule sees
 * exactly the arguments `execute` gets (asynchronous schemas included), the approved call runs
 * with the arguments recorded and shown, and arguments with an own `__proto__` key are refused.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

const seenByRule: unknown[] = [];
const paid: unknown[] = [];
const notes: unknown[] = [];
const received: unknown[] = [];

/** "1,000,000" becomes 1000000; the async refine makes the schema validate asynchronously. */
const payment = z
  .object({
    amount: z.union([z.number(), z.string().transform((text) => Number(text.replace(/,/g, "")))]),
    to: z.string(),
  })
  .refine(async (value) => value.to !== "nobody", { message: "no such payee" });

const ledger = defineConnector({
  name: "ledger",
  tools: {
    pay: {
      inputSchema: payment,
      requiresApproval: (args: { amount: number }) => {
        seenByRule.push(args);
        return args.amount > 100;
      },
      execute: async (args: { amount: number; to: string }) => {
        paid.push(args);
        return { paid: args.amount };
      },
    },
    note: {
      execute: async (args: unknown) => {
        notes.push(args);
        return true;
      },
    },
    transfer: {
      requiresApproval: true,
      execute: async (args: Record<string, unknown>) => {
        received.push(Object.keys(args));
        return "transferred";
      },
    },
    order: {
      requiresApproval: (args: { amount?: number }) => {
        seenByRule.push(args);
        return (args.amount ?? 0) > 100;
      },
      execute: async (args: Record<string, unknown>) => {
        // A tool that merges the arguments into defaults, as many do.
        const order = Object.assign({ amount: 1 }, args) as { amount: number };
        received.push(order.amount);
        return order.amount;
      },
    },
  },
});

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const list of [seenByRule, paid, notes, received]) list.length = 0;
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function setup(): CodemodeRuntime {
  const runtime = createCodemodeRuntime({ connectors: [ledger], limits: { timeoutMs: 10_000 } });
  runtimes.push(runtime);
  return runtime;
}

describe("the approval rule sees what execute will get (issue 17.7)", () => {
  it("R-AP-1 R-CON-2: with an asynchronous schema, { amount: '1,000,000' } is parsed before the rule decides, and pauses", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({ code: "async () => ledger.pay({ amount: '1,000,000', to: 'mallory' })" });
    expect(outcome).toMatchObject({
      status: "paused",
      pending: [{ method: "pay", args: { amount: "1,000,000", to: "mallory" } }],
    });
    expect(seenByRule).toEqual([{ amount: 1_000_000, to: "mallory" }]);
    expect(paid).toEqual([]);
    const approved = await runtime.approve({ executionId: outcome.executionId });
    expect(approved).toMatchObject({ status: "completed", result: { paid: 1_000_000 } });
    expect(paid).toEqual([{ amount: 1_000_000, to: "mallory" }]);
  });

  it("R-CON-2: a small amount runs without approval, with the parsed value", async () => {
    const outcome = await setup().execute({ code: "async () => ledger.pay({ amount: '50', to: 'bob' })" });
    expect(outcome).toMatchObject({ status: "completed", result: { paid: 50 } });
    expect(paid).toEqual([{ amount: 50, to: "bob" }]);
  });

  it("R-CON-2: arguments the asynchronous schema refuses are rejected before the rule runs", async () => {
    const outcome = await setup().execute({
      code: "async () => { try { await ledger.pay({ amount: 5, to: 'nobody' }); } catch (error) { return error.message; } }",
    });
    expect(outcome).toMatchObject({ status: "completed" });
    if (outcome.status === "completed") expect(outcome.result).toContain("no such payee");
    expect(seenByRule).toEqual([]);
  });

  it("R-AP-8: a call issued after one that pauses on its parsed arguments waits for the schema, then runs once in its own seq", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({
      code: "async () => { await ledger.note({ before: true }); return Promise.all([ledger.pay({ amount: '1,000,000', to: 'mallory' }), ledger.note({ after: true })]); }",
    });
    expect(outcome).toMatchObject({ status: "paused", pending: [{ seq: 1, args: { amount: "1,000,000" } }] });
    expect(notes).toEqual([{ before: true }, { after: true }]);
    expect(outcome.calls?.map((call) => [call.seq, call.method, call.state])).toEqual([
      [0, "note", "applied"],
      [1, "pay", "pending"],
      [2, "note", "applied"],
    ]);
  });
});

describe("the approved call runs with the approved arguments (issue 17.8)", () => {
  it("R-AP-2 R-RP-2: a program that reorders the keys on the approval pass does not change what the tool gets", async () => {
    const runtime = setup();
    const code = `async () => {
      let replaying = true;
      await codemode.step('probe', () => { replaying = false; return 1; });
      const args = replaying ? { to: 'bob', amount: 5 } : { amount: 5, to: 'bob' };
      return ledger.transfer(args);
    }`;
    const paused = await runtime.execute({ code });
    expect(paused).toMatchObject({ status: "paused", pending: [{ args: { amount: 5, to: "bob" } }] });
    const approved = await runtime.approve({ executionId: paused.executionId });
    expect(approved).toMatchObject({ status: "completed", result: "transferred" });
    expect(received).toEqual([["amount", "to"]]);
  });
});

describe("__proto__ keys in arguments are refused (issue 17.9)", () => {
  it("R-CON-2: an own __proto__ key is refused before the approval rule or the tool sees it", async () => {
    const outcome = await setup().execute({
      code: `async () => { try { return await ledger.order(JSON.parse('{"item":"mug","__proto__":{"amount":5000}}')); } catch (error) { return error.message; } }`,
    });
    expect(outcome).toMatchObject({ status: "completed" });
    if (outcome.status === "completed")
      expect(outcome.result).toMatch(
        /Invalid arguments for ledger\.order:\n- args\.__proto__: a key named "__proto__" is not accepted/,
      );
    expect(seenByRule).toEqual([]);
    expect(received).toEqual([]);
    expect(outcome.calls).toMatchObject([{ seq: 0, method: "order", state: "error" }]);
  });

  it("R-CON-2: nested and computed __proto__ keys are refused too; an ordinary order goes through", async () => {
    const outcome = await setup().execute({
      code: `async () => {
        const refused = [];
        for (const args of [{ item: { ['__proto__']: { amount: 5000 } } }, { items: [1, JSON.parse('{"__proto__":{}}')] }]) {
          try { await ledger.order(args); } catch (error) { refused.push(error.message.split('\\n')[1]); }
        }
        return [refused, await ledger.order({ amount: 7, note: '__proto__ in a value is fine' })];
      }`,
    });
    expect(outcome).toMatchObject({ status: "completed" });
    if (outcome.status === "completed") {
      const [refused, amount] = outcome.result as [string[], number];
      expect(refused.map((line) => line.split(":")[0])).toEqual(["- args.item.__proto__", "- args.items[1].__proto__"]);
      expect(amount).toBe(7);
    }
    expect(received).toEqual([7]);
  });
});
