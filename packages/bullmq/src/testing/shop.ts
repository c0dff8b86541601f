// The shop the fleet's tests run: `read` answers the stock, `order` needs approval, and both count
// how often they really ran, which is what "runs once" is checked against.
import { createCodemodeRuntime, defineConnector, type ToolDefinition } from "@codemode/core";
import { memoryStorage } from "@codemode/storage/memory";

/** The program most stories submit: a read, then an order that pauses for approval (seq 1). */
export const ORDER = "async () => { const { stock } = await shop.read({}); return shop.order({ sku: 'mug', stock }); }";

/**
 * The `shop` connector and its counts; `extraTools` join `read` and `order`.
 *
 * @example
 * const { shop, ran } = countingShop();
 * // … after the run: expect(ran).toEqual({ read: 1, order: 1 });
 */
export function countingShop(extraTools: Record<string, ToolDefinition> = {}) {
  const ran = { read: 0, order: 0 };
  const shop = defineConnector({
    name: "shop",
    tools: {
      read: {
        execute: async () => {
          ran.read++;
          return { stock: 3 };
        },
      },
      order: {
        requiresApproval: true,
        execute: async (args: { sku: string }) => {
          ran.order++;
          return { orderId: `o-${args.sku}` };
        },
      },
      ...extraTools,
    },
  });
  return { shop, ran };
}

/** A runtime over the counting shop, its runs in an in-process store another runtime can share. */
export function shopRuntime() {
  const { shop, ran } = countingShop();
  const storage = memoryStorage();
  const runtime = createCodemodeRuntime({ connectors: [shop], storage, logger: { warn() {} } });
  return { runtime, ran, storage };
}
