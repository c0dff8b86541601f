import { defineConnector } from "@codemode/core";

/** A connector whose reads are free and whose `apply` needs approval; it remembers what it did. */
export function ledgerConnector() {
  const applied: string[] = [];
  let reads = 0;
  const connector = defineConnector({
    name: "ledger",
    tools: {
      read: {
        execute: async (args: { i: number }) => {
          reads += 1;
          return { i: args.i, count: 1 };
        },
      },
      apply: {
        requiresApproval: true,
        execute: async (args: { item: string }, context) => {
          applied.push(context.idempotencyKey);
          return { applied: args.item };
        },
      },
    },
  });
  return {
    connector,
    /** `idempotencyKey`s of the applied actions, in order. */
    applied,
    get reads() {
      return reads;
    },
  };
}

/** A program that makes `calls` free reads and returns how many it made. */
export const readsProgram = (calls: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${calls}; i++) total += (await ledger.read({ i })).count;
  return total;
}`;

/** A program that makes `reads` free reads, then one `apply` that waits for approval. */
export const readsThenApplyProgram = (reads: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${reads}; i++) total += (await ledger.read({ i })).count;
  const done = await ledger.apply({ item: "item-0" });
  return { total, applied: done.applied };
}`;
