/**
 * Programs the benchmarks run, written once and run both by the library and by the baselines.
 */

/** A program: an async function body, the connectors it uses and how the host answers them. */
export interface BenchProgram {
  /** Statements of an async function body; `return` gives the result. */
  body: string;
  connectors: Record<string, string[]>;
  /** The host side of every connector call: returns a small object, synchronously (no delay). */
  answer(connector: string, method: string, args: unknown): unknown;
  /** The result, as JSON text, a correct run returns. */
  expected: string;
}

/** 5 reads + 1 write: the shape of SPEC §15's cold-pass program. */
export const fiveReadsOneWrite: BenchProgram = {
  body: `
  const customer = await crm.getCustomer({ id: 42 });
  const orders = await crm.listOrders({ customerId: customer.id, limit: 3 });
  const item = await inventory.getItem({ sku: orders[0].sku });
  const stock = await inventory.getStock({ sku: item.sku });
  const notes = await crm.getNotes({ customerId: customer.id });
  const saved = await crm.updateCustomer({ id: customer.id, tier: stock.available > 10 ? "gold" : "silver", noteCount: notes.length });
  return { id: saved.id, tier: saved.tier, ok: saved.ok };`,
  connectors: { crm: ["getCustomer", "listOrders", "getNotes", "updateCustomer"], inventory: ["getItem", "getStock"] },
  answer(connector, method, args) {
    const input = (args ?? {}) as Record<string, unknown>;
    switch (`${connector}.${method}`) {
      case "crm.getCustomer":
        return { id: input.id, name: "Ada Lovelace", email: "ada@example.com", tier: "silver" };
      case "crm.listOrders":
        return [
          { id: 1, sku: "SKU-1", quantity: 2 },
          { id: 2, sku: "SKU-2", quantity: 1 },
          { id: 3, sku: "SKU-3", quantity: 5 },
        ];
      case "inventory.getItem":
        return { sku: input.sku, title: "Analytical Engine", price: 1843 };
      case "inventory.getStock":
        return { sku: input.sku, available: 17 };
      case "crm.getNotes":
        return [{ text: "prefers email" }, { text: "VIP" }];
      case "crm.updateCustomer":
        return { id: input.id, tier: input.tier, ok: true };
      default:
        throw new Error(`unknown method ${connector}.${method}`);
    }
  },
  expected: JSON.stringify({ id: 42, tier: "gold", ok: true }),
};

/** `count` sequential awaited calls of one connector method. */
export function sequentialCalls(count: number): BenchProgram {
  return {
    body: `
  let sum = 0;
  for (let i = 0; i < ${count}; i++) {
    const reply = await bench.echo({ i });
    sum += reply.i;
  }
  return sum;`,
    connectors: { bench: ["echo"] },
    answer(_connector, _method, args) {
      return { i: (args as { i: number }).i, ok: true };
    },
    expected: JSON.stringify((count * (count - 1)) / 2),
  };
}

/** Characters of each result of `largeResults`: near a megabyte of text (a file or a page read whole), under the 1,000,000 a value kept for replay may take. */
export const LARGE_RESULT_CHARS = 900_000;

/** `count` sequential awaited calls whose result is a string of LARGE_RESULT_CHARS characters. */
export function largeResults(count: number): BenchProgram {
  return {
    body: `
  let total = 0;
  for (let n = 0; n < ${count}; n++) total += (await files.read({ n })).length;
  return total;`,
    connectors: { files: ["read"] },
    answer(_connector, _method, args) {
      return `${(args as { n: number }).n}:`.padEnd(LARGE_RESULT_CHARS, "x");
    },
    expected: JSON.stringify(count * LARGE_RESULT_CHARS),
  };
}
