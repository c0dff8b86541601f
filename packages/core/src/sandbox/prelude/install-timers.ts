import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Installs `setTimeout`, `setInterval`, their `clear*` and `queueMicrotask`.
 * A timer is a request to the host's pass-scoped timer service (`__timer`, TIMER_SERVICE), so
 * timers die with the pass and never outlive the deadline; a cancelled timer's reply is ignored.
 * A timer's delay counts from when its request reaches the host, so two timers set together
 * whose delays differ by less than the host's latency between two requests (a few
 * milliseconds, more on a starved machine) may fire in either order.
 */
export function installTimers(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  send: (request: Record<string, unknown>, decode: boolean) => Promise<unknown>,
): void {
  "use strict";
  const { ReflectApply, PromiseResolve, PromiseThen, MapCtor, MapGet, MapSet } = intrinsics;
  const { TypeErrorCtor, StringCtor, MathFloor } = intrinsics;

  let nextTimerId = 1;
  const cancelled = new MapCtor<number, boolean>();
  function schedule(callback: unknown, delay: unknown, args: unknown[], repeat: boolean): number {
    if (typeof callback !== "function") throw new TypeErrorCtor("the timer callback must be a function");
    const timerId = nextTimerId++;
    const ms = typeof delay === "number" && delay > 0 ? MathFloor(delay) : 0;
    const arm = (): void => {
      ReflectApply(PromiseThen, send({ type: "service", name: "__timer", args: StringCtor(ms) }, false), [
        () => {
          if (ReflectApply(MapGet, cancelled, [timerId])) return;
          if (repeat) arm();
          ReflectApply(callback, undefined, args);
        },
      ]);
    };
    arm();
    return timerId;
  }
  function cancel(timerId: unknown): void {
    if (typeof timerId === "number") ReflectApply(MapSet, cancelled, [timerId, true]);
  }
  global.setTimeout = (callback: unknown, delay?: unknown, ...args: unknown[]) =>
    schedule(callback, delay, args, false);
  global.setInterval = (callback: unknown, delay?: unknown, ...args: unknown[]) =>
    schedule(callback, delay, args, true);
  global.clearTimeout = cancel;
  global.clearInterval = cancel;
  global.queueMicrotask = (callback: unknown) => {
    if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask needs a function");
    ReflectApply(PromiseThen, PromiseResolve(), [() => ReflectApply(callback, undefined, [])]);
  };
}
