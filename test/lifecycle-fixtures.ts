/**
 * What the stories of an execution's life share: runtimes closed (and mocks restored) after each
 * test, connectors whose hooks record what they heard, a shop whose orders need approval, a gate
 * that holds a call in flight, a clock that moves without waiting, and a lock whose leases lapse.
 */
import { randomUUID } from "node:crypto";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  type Connector,
  createCodemodeRuntime,
  defineConnector,
  type ToolDefinition,
} from "@codemode/core";
import type { LockProvider } from "@codemode/core/store";
import { afterEach, expect, vi } from "vitest";
import { closeKeptRuntimesAfterEach, keep } from "./runtime-fixtures.ts";

/** After each test of the file: mocks restored, and every runtime `runtimeWith` made closed. */
export function closeRuntimesAfterEach(): void {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  closeKeptRuntimesAfterEach();
}

/** A runtime closed after the test. */
export function runtimeWith(options: CodemodeRuntimeOptions): CodemodeRuntime {
  return keep(createCodemodeRuntime(options));
}

/** One hook call as a connector saw it: "shop.onPassEnd(paused)". */
export interface HookCall {
  event: string;
  executionId: string;
}

/** A connector whose hooks write into `calls`, so a story can check which hooks ran, in what order. */
export function hooked(name: string, calls: HookCall[], tools: Record<string, ToolDefinition> = {}): Connector {
  return defineConnector({
    name,
    tools: { ping: { execute: () => "pong" }, ...tools },
    onPassEnd: (executionId, status) => {
      calls.push({ event: `${name}.onPassEnd(${status})`, executionId });
    },
    disposeExecution: (executionId, status) => {
      calls.push({ event: `${name}.disposeExecution(${status})`, executionId });
    },
  });
}

/** The events of the hook calls, in order. */
export const events = (calls: HookCall[]) => calls.map((call) => call.event);

/** A shop whose `create_order` needs approval and counts how often it really ran. */
export function shopTools(counter: { orders: number }): Record<string, ToolDefinition> {
  return {
    list_items: { execute: () => [{ id: 1, name: "pen" }] },
    create_order: {
      requiresApproval: true,
      execute: () => {
        counter.orders += 1;
        return { orderId: `o-${counter.orders}` };
      },
      revert: () => undefined,
    },
  };
}

/** Lists the items, orders the first (needs approval), returns the order id. */
export const ORDER_CODE = `async () => {
  const items = await shop.list_items();
  const order = await shop.create_order({ item: items[0].id });
  return order.orderId;
}`;

/** A promise the test opens by hand, to hold a tool call (and so its pass and lease) in flight. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  return { open, opened, started, markStarted };
}

/**
 * Moves the host clock forward, as waiting would, without waiting: only `Date.now` is shifted,
 * and only between operations (no pass runs while it moves).
 */
export function shiftableClock() {
  const realNow = Date.now.bind(Date);
  let offsetMs = 0;
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + offsetMs);
  return {
    advance(ms: number) {
      offsetMs += ms;
    },
  };
}

/** An hour in milliseconds. */
export const HOUR = 60 * 60 * 1000;

/**
 * A lock whose leases the test can make lapse, as a lease does when the host holding it dies and
 * stops renewing it; the lapsed holder's renewals then fail, as they would against a real store.
 */
export function lapsableLock() {
  const held = new Map<string, string>();
  const provider: LockProvider = {
    async acquire(key, { waitMs }) {
      const deadline = Date.now() + waitMs;
      while (held.has(key)) {
        if (Date.now() >= deadline) return null;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const token = randomUUID();
      held.set(key, token);
      return {
        token,
        async renew() {
          return held.get(key) === token;
        },
        async release() {
          if (held.get(key) === token) held.delete(key);
        },
      };
    },
    async isHeld(key) {
      return held.has(key);
    },
  };
  return {
    provider,
    /** The lease on this execution lapses: its holder is taken for dead. */
    lapse(executionId: string) {
      for (const key of held.keys()) if (key.endsWith(`:lock:${executionId}`)) held.delete(key);
    },
  };
}

/** A paused order (its hooks recorded in `calls`, its real runs counted in `counter`). */
export async function pausedOrder(options: Partial<CodemodeRuntimeOptions> = {}) {
  const calls: HookCall[] = [];
  const counter = { orders: 0 };
  const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter))], ...options });
  const paused = await runtime.execute({ code: ORDER_CODE });
  expect(paused.status).toBe("paused");
  return { runtime, counter, calls, executionId: paused.executionId };
}
