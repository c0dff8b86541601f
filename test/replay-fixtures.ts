/**
 * What the replay stories share: a shop whose every tool records how it was called, a runtime over
 * an in-memory Keyv store closed after each test, and a way to rewrite a stored log entry as a
 * host that died would have left it.
 */
import { type CodemodeRuntimeOptions, createCodemodeRuntime, defineConnector, type ToolContext } from "@codemode/core";
import Keyv from "keyv";
import { expect } from "vitest";
import { closeKeptRuntimesAfterEach, keep } from "./runtime-fixtures.ts";

export type Call = { args: unknown; context: ToolContext };

/** A shop whose every tool records how it was called, so a story can count real executions. */
export function makeShop() {
  const calls: Record<string, Call[]> = {};
  /** Which pass is running: the first is 1, and onPassEnd moves to the next. */
  let pass = 1;
  const bets = new Map<string, string>();
  const track = (method: string, args: unknown, context: ToolContext) => {
    calls[method] ??= [];
    calls[method].push({ args, context });
    return calls[method].length;
  };
  const connector = defineConnector({
    name: "shop",
    tools: {
      list_items: {
        execute: (args, context) => {
          const count = track("list_items", args, context);
          return [
            { id: 1, name: "pen", listing: count },
            { id: 2, name: "cup", listing: count },
          ];
        },
      },
      read: {
        execute: async (args: { n: number; delayMs?: number }, context) => {
          track("read", args, context);
          if (args.delayMs) await new Promise((resolve) => setTimeout(resolve, args.delayMs));
          return { n: args.n, value: args.n * 10 };
        },
      },
      /** Delays that change from pass to pass: the order calls finish in differs between passes. */
      jittery: {
        execute: async (args: { n: number }, context) => {
          track("jittery", args, context);
          const delayMs = pass % 2 === 1 ? (6 - args.n) * 8 : args.n * 8;
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          return args.n * 100;
        },
      },
      jittery_live: {
        replay: "reexecute",
        execute: async (args: { n: number }, context) => {
          track("jittery_live", args, context);
          const delayMs = pass % 2 === 1 ? (6 - args.n) * 8 : args.n * 8;
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          return args.n * 1000;
        },
      },
      /** A read that runs on every pass and answers how many times it ran: differs per pass. */
      pass_number: {
        replay: "reexecute",
        execute: (args, context) => track("pass_number", args, context),
      },
      write: {
        execute: async (args: { n: number; delayMs?: number }, context) => {
          if (args.delayMs) await new Promise((resolve) => setTimeout(resolve, args.delayMs));
          track("write", args, context);
          return { written: args.n };
        },
      },
      flaky: {
        execute: (args, context) => {
          const count = track("flaky", args, context);
          throw new Error(`warehouse offline (attempt ${count})`);
        },
      },
      charge: {
        execute: (args: { amount: number }, context) => {
          const count = track("charge", args, context);
          return { chargeId: `ch-${count}` };
        },
      },
      charge_once: {
        onInterrupted: "ask",
        execute: (args: { amount: number }, context) => {
          const count = track("charge_once", args, context);
          return { chargeId: `cho-${count}` };
        },
      },
      /** An approval-gated call that must never run twice unasked (R-RP-4b). */
      place_bet: {
        requiresApproval: true,
        onInterrupted: "ask",
        execute: (args, context) => {
          track("place_bet", args, context);
          // Like a real API that dedupes by idempotency key: a retry returns the same bet.
          if (!bets.has(context.idempotencyKey)) bets.set(context.idempotencyKey, `b-${bets.size + 1}`);
          return { betId: bets.get(context.idempotencyKey) };
        },
      },
      create_order: {
        requiresApproval: true,
        execute: (args, context) => {
          const count = track("create_order", args, context);
          return { orderId: `o-${count}` };
        },
      },
      cancel_order: {
        requiresApproval: true,
        execute: (args, context) => {
          track("cancel_order", args, context);
          return { cancelled: true };
        },
      },
    },
    onPassEnd: () => {
      pass += 1;
    },
  });
  const count = (method: string) => calls[method]?.length ?? 0;
  return { connector, calls, count };
}

/** Closes, after each test of the file, every runtime `setup` made. */
export const closeRuntimesAfterEach = closeKeptRuntimesAfterEach;

/** The shop and a runtime over a fresh in-memory Keyv store (`options` override). */
export function setup(options: Partial<CodemodeRuntimeOptions> = {}) {
  const shop = makeShop();
  const keyv = new Keyv();
  const runtime = keep(
    createCodemodeRuntime({ connectors: [shop.connector], storage: keyv, limits: { timeoutMs: 5_000 }, ...options }),
  );
  return { ...shop, runtime, keyv };
}

/** Rewrites one stored log entry, as if a host had died at that point. */
export async function editEntry(
  keyv: Keyv,
  executionId: string,
  seq: number,
  change: (entry: Record<string, unknown>) => void,
) {
  const key = `cm:default:e:${executionId}:${seq}`;
  const text = await keyv.get(key);
  expect(typeof text).toBe("string");
  const entry = JSON.parse(text as string) as Record<string, unknown>;
  change(entry);
  await keyv.set(key, JSON.stringify(entry));
}
