/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts), before any model code: it
 * may reference nothing outside itself.
 *
 * Some Array built-ins loop in native code without checking whether they should stop: over an
 * array-like whose `length` is 2^53 − 1, or a sparse array of 2^32 − 1, `indexOf`, `forEach`,
 * `reduce`, `sort`, `unshift` and the like run for hours. Neither engine stops them: V8 does not
 * honour isolated-vm's termination inside them (and disposing the isolate then waits for them),
 * and quickjs-ng 0.12 (the build quickjs-emscripten 0.32 ships; fixed upstream in 0.16.2) does not
 * poll its interrupt handler there. So, before any program runs, each such method is wrapped: on a receiver (or, for `concat`, an argument it spreads) longer than the bound, it
 * throws a RangeError the program may catch; otherwise it calls the built-in. A dense array of
 * the bound holds at least 8 MB, more than most programs build; the loop over it takes tens of
 * milliseconds, after which the interrupt handler is polled again.
 *
 * (`fill` and `Array.from` are not guarded: each element they write takes memory, so the memory
 * limit ends them.)
 *
 * Costs what a wrapper costs: the receiver's `length` is read twice (once here, once by the
 * built-in), and the methods' `toString()` shows their source, not "[native code]".
 */
export function installArrayGuard(): void {
  "use strict";
  const ArrayPrototype = Array.prototype as unknown as Record<string, unknown>;
  const { apply } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor } = Object;
  const isArray = Array.isArray;
  const ObjectCtor = Object;
  const spreadable = Symbol.isConcatSpreadable;
  const RangeErrorCtor = RangeError;
  /** Elements a guarded method goes over at most; sorting compares, so it gets less. */
  const MAX_ELEMENTS = 10_000_000;
  const MAX_SORTED = 1_000_000;
  const linear = [
    "indexOf",
    "lastIndexOf",
    "includes",
    "join",
    "toLocaleString",
    "forEach",
    "every",
    "some",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "reduce",
    "reduceRight",
    "map",
    "filter",
    "flat",
    "flatMap",
    "reverse",
    "copyWithin",
    "splice",
    "shift",
    "unshift",
    "toReversed",
    "toSpliced",
    "with",
  ];

  /** The receiver's length as the built-in will see it (ToLength), read once more than it would be. */
  function lengthOf(value: unknown): number {
    // ToNumber, as the built-in does (a bigint throws there too).
    const length = +(ObjectCtor(value) as { length: number }).length;
    // biome-ignore lint/complexity/useMathMinMax: NaN must become 0, and Math may be the program's by now.
    return length > 0 ? length : 0;
  }

  function refuse(name: string, length: number, most: number): never {
    throw new RangeErrorCtor(
      `Array.prototype.${name} was called on ${length} elements; in this sandbox it takes at most ${most}`,
    );
  }

  function guard(name: string, most: number, over: (self: unknown, args: unknown[]) => number): void {
    const descriptor = getOwnPropertyDescriptor(ArrayPrototype, name);
    const native = descriptor?.value;
    if (typeof native !== "function") return;
    const wrapped = {
      [name](this: unknown, ...args: unknown[]) {
        // null and undefined go to the built-in, which throws its own TypeError.
        if (this !== null && this !== undefined) {
          const length = over(this, args);
          if (length > most) refuse(name, length, most);
        }
        return apply(native as (...args: unknown[]) => unknown, this, args);
      },
    }[name]!;
    defineProperty(wrapped, "length", { value: (native as { length: number }).length });
    defineProperty(ArrayPrototype, name, { ...descriptor, value: wrapped });
  }

  for (const name of linear) guard(name, MAX_ELEMENTS, (self) => lengthOf(self));
  for (const name of ["sort", "toSorted"]) guard(name, MAX_SORTED, (self) => lengthOf(self));
  // `concat` goes over the receiver and every argument it spreads.
  // Indexed loops only: a program may have replaced the array iterator by then.
  guard("concat", MAX_ELEMENTS, (self, args) => {
    let total = spreadLength(self);
    for (let index = 0; index < args.length; index++) total += spreadLength(args[index]);
    return total;
  });

  function spreadLength(item: unknown): number {
    if (item === null || typeof item !== "object") return 0;
    const spread = (item as Record<symbol, unknown>)[spreadable];
    return (spread === undefined ? isArray(item) : spread) ? lengthOf(item) : 0;
  }
}
