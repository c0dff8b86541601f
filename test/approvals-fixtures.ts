/**
 * What the approval stories share: a `shop` (list, gated create_order, revertable charge) and a
 * `mail` connector that record every call, and a runtime over an in-memory Keyv store closed after
 * each test. The checks that narrow an outcome are in outcome-fixtures.ts.
 */
import { type CodemodeRuntimeOptions, createCodemodeRuntime, defineConnector, type ToolContext } from "@codemode/core";
import Keyv from "keyv";
import { closeKeptRuntimesAfterEach, keep } from "./runtime-fixtures.ts";

export type Call = { args: unknown; context: ToolContext };

/** `shop` and `mail`; `calls` has every call a tool received, `reverts` every revert, by method. */
export function makeConnectors() {
  const calls: Record<string, Call[]> = {};
  const reverts: string[] = [];
  const track = (method: string, args: unknown, context: ToolContext) => {
    calls[method] ??= [];
    calls[method].push({ args, context });
    return calls[method].length;
  };
  const shop = defineConnector({
    name: "shop",
    tools: {
      list_items: {
        execute: (args, context) => {
          track("list_items", args, context);
          return [
            { id: 1, name: "pen" },
            { id: 2, name: "cup" },
          ];
        },
      },
      charge: {
        execute: (args: { amount: number }, context) => {
          const count = track("charge", args, context);
          return { chargeId: `ch-${count}` };
        },
        revert: (args) => {
          reverts.push(`charge ${JSON.stringify(args)}`);
        },
      },
      create_order: {
        description: "Places an order for an item.",
        inputSchema: { type: "object", properties: { item: { type: "number" } }, required: ["item"] },
        requiresApproval: true,
        execute: async (args: { item: number }, context) => {
          const count = track("create_order", args, context);
          // A real API takes a while; concurrent approvals overlap here.
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { orderId: `o-${count}` };
        },
        revert: (args) => {
          reverts.push(`create_order ${JSON.stringify(args)}`);
        },
      },
      refund: {
        requiresApproval: (args: { amount: number }) => args.amount > 100,
        execute: (args: { amount: number }, context) => {
          track("refund", args, context);
          return { refunded: args.amount };
        },
      },
      ship: {
        requiresApproval: (args: { to?: { country: string } }) => args.to!.country !== "NL",
        execute: (args, context) => {
          track("ship", args, context);
          return { shipped: true };
        },
      },
    },
  });
  const mail = defineConnector({
    name: "mail",
    tools: {
      send: {
        execute: (args: { to: string }, context) => {
          track("send", args, context);
          return { sent: true };
        },
      },
    },
  });
  const count = (method: string) => calls[method]?.length ?? 0;
  return { shop, mail, calls, reverts, count };
}

/** Closes, after each test of the file, every runtime `track` (and so `setup`) kept. */
export const closeRuntimesAfterEach = closeKeptRuntimesAfterEach;

/** Keeps `runtime` to be closed after the test. */
export const track = keep;

/** The connectors and a runtime with both over a fresh in-memory Keyv store (`options` override). */
export function setup(options: Partial<CodemodeRuntimeOptions> = {}) {
  const connectors = makeConnectors();
  const keyv = new Keyv();
  const runtime = track(
    createCodemodeRuntime({
      connectors: [connectors.shop, connectors.mail],
      storage: keyv,
      limits: { timeoutMs: 5_000 },
      ...options,
    }),
  );
  return { ...connectors, runtime, keyv };
}

/** Lists the items, orders the first (needs approval), returns the order id. */
export const ORDER_CODE = `async () => {
  const items = await shop.list_items();
  const order = await shop.create_order({ item: items[0].id });
  return order.orderId;
}`;
