import type { ArrayGuardTools } from "./install-array-guard.js";

/**
 * Two more parts of the array guard (see install-array-guard.ts), for the built-ins that also go
 * over arrays other than their receiver: `concat` over every item it spreads, `flat` and `flatMap`
 * over nested arrays. Each reads those lengths late, after code of the program may have run (an
 * element's getter, a species constructor, the mapper), so a length checked up front, even a
 * genuine array's, is not the length it loops over (R-SB-8). Like every part, each runs inside the
 * sandbox before any program and references nothing but itself and the tools it is handed.
 */

/**
 * `concat` gets, for each item, something whose length cannot change any more: a genuine array
 * copied by the built-in itself just after the check (it reads the length before any code of the
 * program runs), or a snapshot that answers IsConcatSpreadable and `length` as they were read here.
 */
export function installConcatGuard(tools: ArrayGuardTools): void {
  "use strict";
  const { maxElements, ensureWithin, lengthOf, snapshot, replace, plainArray, speciesIsPlain } = tools;
  const ArrayPrototype = Array.prototype as unknown as Record<PropertyKey, unknown>;
  const ObjectPrototype = Object.prototype;
  const { apply, getPrototypeOf } = Reflect;
  const { hasOwn } = Object;
  const isArray = Array.isArray;
  const ObjectCtor = Object;
  const spreadable = Symbol.isConcatSpreadable;
  const nativeConcat = ArrayPrototype.concat as (...items: unknown[]) => unknown[];
  /** What copies are made on: it never reaches the program. */
  const emptyArray: unknown[] = [];
  type Parts = Record<number, unknown> & { length: number };
  const LABEL = "Array.prototype.concat";

  /** A plain array `concat` spreads asking nothing of the program. */
  const spreadsPlainly = (value: unknown): value is unknown[] => plainArray(value) && !hasOwn(value, spreadable);
  /** Nothing of the program runs when `concat` makes its result or asks a plain array whether it spreads. */
  function concatIsPlain(): boolean {
    return (
      speciesIsPlain() &&
      getPrototypeOf(ArrayPrototype) === ObjectPrototype &&
      !hasOwn(ArrayPrototype, spreadable) &&
      !hasOwn(ObjectPrototype, spreadable)
    );
  }
  /** Puts at `parts[at]` what the built-in gets for `item`, and returns how many elements that adds. */
  function addPart(parts: Parts, at: number, item: unknown): number {
    let part = item;
    let count = 1;
    if (item !== null && (typeof item === "object" || typeof item === "function")) {
      const flag = (item as Record<symbol, unknown>)[spreadable];
      const spreads = flag === undefined ? isArray(item) : !!flag;
      if (spreads) count = lengthOf(item);
      // One not spread becomes a snapshot of length 1 that spreads into the item itself.
      part = snapshot(spreads ? item : { __proto__: null, 0: item }, count, spreadable, true);
    }
    parts[at] = part;
    return count;
  }

  const methods = {
    concat(this: unknown, ...items: unknown[]) {
      if (this === null || this === undefined) return apply(nativeConcat, this, items);
      const object = ObjectCtor(this);
      // Read by index, never iterated: the program may own the iterator. parts[0] is the receiver's.
      const parts = { __proto__: null, length: 1, 0: object } as Parts;
      let total = 0;
      const direct = spreadsPlainly(object) && concatIsPlain();
      // Whether concatIsPlain() held and no code of the program could run since (an item's getters, a copy's).
      let stillPlain = direct;
      if (!direct) total += addPart(parts, 0, object);
      for (let index = 0; index < items.length; index++) {
        const item = items[index];
        const at = parts.length++;
        if (spreadsPlainly(item) && (stillPlain || concatIsPlain())) {
          // Copied now: in one call, a getter among the elements of one item could lengthen a later one.
          total += item.length;
          ensureWithin(LABEL, total, maxElements);
          parts[at] = apply(nativeConcat, emptyArray, [item]);
        } else total += addPart(parts, at, item);
        ensureWithin(LABEL, total, maxElements);
        if (item !== null && (typeof item === "object" || typeof item === "function")) stillPlain = false;
      }
      if (direct && spreadsPlainly(object) && (stillPlain || concatIsPlain())) {
        // The result the receiver's species makes; the receiver's length is read before any code of the program runs.
        ensureWithin(LABEL, total + object.length, maxElements);
        return apply(nativeConcat, emptyArray, parts);
      }
      // The copies ran the program's getters, which changed the receiver or the species: a snapshot after all.
      if (direct) total += addPart(parts, 0, object);
      ensureWithin(LABEL, total, maxElements);
      // Over a snapshot of length 0, the built-in makes the result by the receiver's species.
      return apply(nativeConcat, snapshot(object, 0, spreadable, true), parts);
    },
  };
  replace(ArrayPrototype, "concat", methods.concat);
}

/**
 * `flat` and `flatMap` run FlattenIntoArray in JavaScript, which the engines interrupt at the
 * deadline; it reads each nested array's length once, as it reaches it, and checks that.
 */
export function installFlatGuard(tools: ArrayGuardTools): void {
  "use strict";
  const { maxElements, ensureWithin, lengthOf, snapshot, replace, plainArray, speciesIsPlain } = tools;
  const ArrayPrototype = Array.prototype as unknown as Record<PropertyKey, unknown>;
  const ObjectPrototype = Object.prototype;
  const { apply, getPrototypeOf, defineProperty: reflectDefineProperty } = Reflect;
  const isArray = Array.isArray;
  const ObjectCtor = Object;
  const TypeErrorCtor = TypeError;
  const nativeFlat = ArrayPrototype.flat as () => object;
  const nativeFlatMap = ArrayPrototype.flatMap as (mapper: unknown) => object;
  type Mapping = (element: unknown, index: number) => unknown;

  /**
   * Into a plain array of the default species, an element is set (the fastest way) unless a prototype
   * has that index, whose setter would then run; into any other, defined, as the built-in does.
   */
  function flattenInto(
    into: unknown[],
    plain: boolean,
    source: object,
    length: number,
    start: number,
    depth: number,
    map?: Mapping,
  ) {
    const label = map === undefined ? "Array.prototype.flat" : "Array.prototype.flatMap";
    let targetIndex = start;
    for (let sourceIndex = 0; sourceIndex < length; sourceIndex++) {
      if (!(sourceIndex in source)) continue;
      let element = (source as Record<number, unknown>)[sourceIndex];
      if (map !== undefined) element = map(element, sourceIndex);
      if (depth > 0 && isArray(element)) {
        const elementLength = lengthOf(element);
        ensureWithin(label, elementLength, maxElements);
        targetIndex = flattenInto(into, plain, element, elementLength, targetIndex, depth - 1);
        continue;
      }
      if (targetIndex >= 2 ** 53 - 1) throw new TypeErrorCtor(`${label} would make an array longer than 2^53 - 1`);
      // `in` finds the index on Array.prototype or Object.prototype, the chain a plain array's Set walks.
      if (plain && getPrototypeOf(ArrayPrototype) === ObjectPrototype && !(targetIndex in ArrayPrototype)) {
        into[targetIndex++] = element;
        continue;
      }
      const descriptor = { __proto__: null, value: element, writable: true, enumerable: true, configurable: true };
      if (!reflectDefineProperty(into, targetIndex++, descriptor as never))
        throw new TypeErrorCtor(`${label}: cannot add`);
    }
    return targetIndex;
  }
  function flatten(object: object, length: number, depth: number, map?: Mapping): unknown[] {
    // ArraySpeciesCreate(O, 0): a plain array for an array-like or a plain array, else by the built-in itself (over
    // a snapshot of length 0 it flattens nothing), running the species' code as it would.
    const plain = !isArray(object) || (plainArray(object) && speciesIsPlain());
    const result = plain ? [] : (apply(nativeFlat, snapshot(object, 0), []) as unknown[]);
    flattenInto(result, plain, object, length, 0, depth, map);
    return result;
  }

  const methods = {
    flat(this: unknown, depth?: unknown) {
      if (this === null || this === undefined) return apply(nativeFlat, this, []);
      const object = ObjectCtor(this);
      const length = lengthOf(object);
      ensureWithin("Array.prototype.flat", length, maxElements);
      // ToIntegerOrInfinity, where NaN and anything below 1 flatten nothing.
      const number = depth === undefined ? 1 : +(depth as number);
      return flatten(object, length, number >= 1 ? (number === Infinity ? number : number - (number % 1)) : 0);
    },
    flatMap(this: unknown, mapper: unknown, thisArgument?: unknown) {
      if (this === null || this === undefined) return apply(nativeFlatMap, this, [mapper]);
      const object = ObjectCtor(this);
      const length = lengthOf(object);
      ensureWithin("Array.prototype.flatMap", length, maxElements);
      // Not callable: the built-in throws its own TypeError.
      if (typeof mapper !== "function") return apply(nativeFlatMap, snapshot(object, 0), [mapper]);
      return flatten(object, length, 1, (element, index) => apply(mapper, thisArgument, [element, index, object]));
    },
  };
  replace(ArrayPrototype, "flat", methods.flat);
  replace(ArrayPrototype, "flatMap", methods.flatMap);
}
