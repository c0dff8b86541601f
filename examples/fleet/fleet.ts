// What every process of the fleet example shares: one Redis, one runtime name, the same
// connectors. The web process (submit.ts), the approving process (approve.ts) and the workers
// (worker.ts) each open their own runtime over this store; only workers run passes.

import type { CodemodeQueueConnection } from "@codemode/bullmq";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { redisStorage } from "@codemode/storage/redis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** The store namespace and the BullMQ queue name of this example. */
export const FLEET = "codemode-fleet-example";
/**
 * Short so the demo is quick: a killed worker's run resumes about 3 s later. A worker renews the
 * run's lease every third of `LEASE_MS` and BullMQ's job lock every half of `LOCK_MS`; keep
 * LOCK_MS ≥ LEASE_MS, so that when BullMQ hands the job to another worker the lease has lapsed.
 * Production values: docs/fleet.md.
 */
export const LEASE_MS = 2_000;
export const LOCK_MS = 2_000;
export const STALLED_INTERVAL_MS = 1_000;

export const connection: CodemodeQueueConnection = { redis: REDIS_URL };

/** What the model wrote: look the customer up, refund them (a person approves), send a note. */
export const program = (customer: string) => `async () => {
  const account = await billing.lookup({ customer: ${JSON.stringify(customer)} });
  const refund = await billing.refund({ customer: account.customer, amount: account.overcharged });
  const note = await billing.notify({ customer: account.customer, text: "We refunded " + refund.amount + " EUR." });
  return { account: account.by, refund: refund.by, note: note.by, refundId: refund.refundId };
}`;

/**
 * The billing connector. Each call says which worker ran it (`by`) and tells the example's
 * orchestrator over IPC when it starts, so main.ts can kill a worker inside a call. A real API
 * would dedupe the refund on `context.idempotencyKey`: the same on every attempt of that call.
 */
export function openFleet(workerId: string): { runtime: CodemodeRuntime; storage: CodemodeStorage } {
  const slow = () => new Promise((resolve) => setTimeout(resolve, 1_500));
  const started = (method: string, context: { executionId: string }) =>
    process.send?.({ event: "call", workerId, method, executionId: context.executionId });
  const billing = defineConnector({
    name: "billing",
    tools: {
      lookup: {
        description: "A customer's account and how much they were overcharged.",
        execute: async (args: { customer: string }, context) => {
          started("lookup", context);
          await slow();
          return { customer: args.customer, overcharged: 12, by: workerId };
        },
      },
      refund: {
        description: "Refund an amount to a customer.",
        requiresApproval: true,
        execute: async (args: { customer: string; amount: number }, context) => {
          started("refund", context);
          await slow();
          return { refundId: `rf-${context.idempotencyKey.slice(0, 8)}`, amount: args.amount, by: workerId };
        },
      },
      notify: {
        description: "Send the customer a note.",
        execute: async (_args: { customer: string; text: string }, context) => {
          started("notify", context);
          await slow();
          return { sent: true, by: workerId };
        },
      },
    },
  });
  const storage = redisStorage(REDIS_URL, { namespace: FLEET });
  const runtime = createCodemodeRuntime({ connectors: [billing], storage, leaseMs: LEASE_MS, logger: { warn() {} } });
  return { runtime, storage };
}
