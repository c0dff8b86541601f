/**
 * What the decide tests on the four stores share: a shop runtime over a fresh namespace of the
 * store, whose orders and refunds need approval, closed after each test; and the log's states.
 */
import { randomUUID } from "node:crypto";
import {
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
  type ExecutionState,
} from "@codemode/core";
import { closedAfterEach, type Store, serviceCheck } from "./four-stores-fixtures.ts";

/**
 * Within a store's describe: the check that skips (or, in CI, fails) when the store's service is
 * missing, and `shopRuntime`, whose runtimes and storages are closed after each test.
 */
export function useShop(store: Store) {
  const cannotRun = serviceCheck(store);
  const opened = closedAfterEach();
  /** A shop whose orders and refunds need approval; `ran` has every call a tool received. */
  function shopRuntime(options: Partial<CodemodeRuntimeOptions> = {}) {
    const storage = store.open(`codemode-decide-${randomUUID().slice(0, 8)}`);
    opened.push(storage);
    const ran: Array<[string, unknown]> = [];
    const note = <T>(method: string, args: unknown, result: T): T => {
      ran.push([method, args]);
      return result;
    };
    const shop = defineConnector({
      name: "shop",
      tools: {
        read: { readOnly: true, execute: (args: { n: number }) => note("read", args, { n: args.n }) },
        order: {
          description: "Places an order.",
          inputSchema: {
            type: "object",
            properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1, maximum: 10 } },
            required: ["sku", "qty"],
            additionalProperties: false,
          },
          requiresApproval: true,
          execute: (args: { sku: string; qty: number }) => note("order", args, { ordered: args }),
        },
        refund: {
          requiresApproval: true,
          execute: (args: { n: number }) => note("refund", args, { refunded: args.n }),
        },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop], storage, logger: { warn() {} }, ...options });
    opened.unshift(runtime);
    return { runtime, ran };
  }

  return { cannotRun, shopRuntime };
}

/** Each log entry's `[seq, method, state]`. */
export const states = (state: ExecutionState | null) =>
  state?.log.map((entry) => [entry.seq, entry.method, entry.state]);
