/**
 * Runs INSIDE a QuickJS sandbox, from its source text, before the prelude (prelude.ts) and any
 * model code: it may reference nothing outside itself. Makes the context's globals what they are
 * in an isolated-vm context, so the prelude runs unchanged and the sandbox keeps its promises:
 *
 * - quickjs-ng's built-ins that are not ECMAScript go (R-SB-1): `performance` (whose `now()`
 *   would also read a real clock that replay cannot hold still, R-SB-6), `InternalError`,
 *   `DOMException`, and the global object's own `Symbol.toStringTag`;
 * - call sites (what `Error.prepareStackTrace` is given) hand out no function and no receiver:
 *   quickjs-ng's `getFunction()` returns every frame's function, the prelude's strict ones
 *   included, and V8's never returns a strict one (R-SB-4). `getThis()`, which quickjs-ng lacks,
 *   answers undefined as V8 does for strict frames.
 */
export function adaptQuickJsGlobals(): void {
  "use strict";
  const global = globalThis as Record<PropertyKey, unknown>;
  delete global.performance;
  delete global.InternalError;
  delete global.DOMException;
  delete global[Symbol.toStringTag];

  // The call sites' prototype is reachable only from a frame: one is made and dropped.
  const hook = Error as unknown as { prepareStackTrace: unknown };
  let callSite: object | undefined;
  hook.prepareStackTrace = (_error: unknown, frames: object[]) => {
    callSite = frames.length > 0 ? Object.getPrototypeOf(frames[0]) : undefined;
    return "";
  };
  try {
    void new Error().stack;
  } finally {
    hook.prepareStackTrace = undefined;
  }
  if (!callSite) throw new Error("the call sites of stack traces could not be found");
  const hidden = {
    getFunction(): undefined {
      return undefined;
    },
    getThis(): undefined {
      return undefined;
    },
  };
  for (const name of ["getFunction", "getThis"] as const)
    Object.defineProperty(callSite, name, {
      value: hidden[name],
      writable: true,
      configurable: true,
      enumerable: false,
    });
}
