/**
 * The array guard: parts that run INSIDE the sandbox (as source text, see prelude.ts) before any
 * model code, in the order sandbox-setup.ts calls them, these four and the two of
 * install-array-copy-guards.ts. Each references nothing but itself and what it is handed, and
 * captures the built-ins it uses before any program can replace them.
 *
 * Some Array built-ins loop in native code, where neither engine stops them (V8 ignores
 * isolated-vm's termination there; quickjs-ng 0.12, quickjs-emscripten 0.32's, polls no interrupt
 * there until 0.16.2): over an array-like of length 2^53 − 1, or a sparse array of 2^32 − 1, they
 * run for hours. So each is wrapped: past a bound (a dense array of it is 8 MB or more, its loop
 * tens of milliseconds) it throws a RangeError the program may catch.
 *
 * The length checked is the length the built-in loops over (R-SB-8). A genuine array's `length`
 * is a data property nothing can change before the built-in reads it, so a genuine array goes
 * straight to the built-in. Anything else may answer the built-in otherwise (a getter answering
 * 0, then 2^53 − 1; a proxy of an array, whose `get` trap may report any length since array
 * `length` is writable): the built-in gets a snapshot, whose `length` is the value checked and
 * whose other operations reach the receiver, so that `splice` or `sort` still change it.
 *
 * Not guarded: `keys`, `values` and `entries` make iterators, which read the length afresh at each
 * step and yield one element, so no loop of theirs goes over the receiver (what loops over an
 * iterator is its consumer's). `at`, `pop`, `push` and `Array.of` touch one element or their
 * arguments; `Array.fromAsync` awaits every element; `toString` calls `join`, which is guarded.
 */

export type ProxyRegistry = ReturnType<typeof installProxyRegistry>;
export type ArrayGuardTools = ReturnType<typeof createArrayGuardTools>;

/**
 * Wraps the global `Proxy` so that every proxy the program makes, `Proxy.revocable`'s too, is
 * registered: `Array.isArray` is true for a proxy of an array, which the guard must tell from a
 * genuine array. The program sees the constructor it knows: `new Proxy(target, handler)` works, a
 * call without `new` throws the engine's TypeError, `typeof`, `name`, `length` and the missing
 * `prototype` are the original's, for the wrapper is a proxy of it. Its handler has no prototype
 * a program could give a trap, which would be handed the unwrapped constructor.
 */
export function installProxyRegistry() {
  "use strict";
  const NativeProxy = Proxy;
  const global = globalThis as Record<string, unknown>;
  const { apply, construct } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor } = Object;
  const proxies = new WeakSet<object>();
  // Own methods of a set no program reaches: replacing WeakSet.prototype's changes nothing here.
  defineProperty(proxies, "add", { value: WeakSet.prototype.add });
  defineProperty(proxies, "has", { value: WeakSet.prototype.has });
  // Until the program makes a proxy, telling a genuine array costs one comparison.
  let madeAny = false;
  const register = <Made extends object>(proxy: Made): Made => {
    madeAny = true;
    proxies.add(proxy);
    return proxy;
  };
  const revocable = NativeProxy.revocable;
  const methods = {
    revocable(target: object, handler: ProxyHandler<object>) {
      const pair = apply(revocable, NativeProxy, [target, handler]);
      register(pair.proxy);
      return pair;
    },
  };
  defineProperty(NativeProxy, "revocable", { value: methods.revocable });
  const handler = {
    __proto__: null,
    construct(target: ProxyConstructor, args: unknown[], newTarget: ProxyConstructor) {
      return register(construct(target, args, newTarget));
    },
  } as ProxyHandler<ProxyConstructor>;
  const descriptor = getOwnPropertyDescriptor(global, "Proxy");
  defineProperty(global, "Proxy", { ...descriptor, value: new NativeProxy(NativeProxy, handler) });
  return { isProxy: (value: unknown): boolean => madeAny && proxies.has(value as object), NativeProxy };
}

/** What both guards share: the bound, lengths read as the built-ins read them, and snapshots. */
export function createArrayGuardTools(registry: ProxyRegistry) {
  "use strict";
  const { isProxy, NativeProxy } = registry;
  const { get, set, has, deleteProperty, ownKeys } = Reflect;
  const { defineProperty: reflectDefineProperty, getOwnPropertyDescriptor: reflectDescriptorOf } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor, hasOwn } = Object;
  const isArray = Array.isArray;
  const ArrayCtor = Array;
  const ArrayPrototype = Array.prototype;
  const getPrototypeOf = Reflect.getPrototypeOf;
  const RangeErrorCtor = RangeError;
  const MAX_SAFE = 2 ** 53 - 1;
  /** `field` ("value" or "get") of `object`'s own property `key`, read without running it; undefined if none. */
  function ownField(object: object, key: PropertyKey, field: "value" | "get"): unknown {
    const own = getOwnPropertyDescriptor(object, key);
    return own !== undefined && hasOwn(own, field) ? own[field] : undefined;
  }
  const species = Symbol.species;
  const speciesGetter = ownField(ArrayCtor, species, "get");
  /** ToLength, after ToNumber as the built-in does it: a valueOf runs once, a bigint or a symbol throws. */
  function toLength(value: unknown): number {
    const number = +(value as number);
    if (!(number > 0)) return 0;
    return number < MAX_SAFE ? number - (number % 1) : MAX_SAFE;
  }
  type Snapshot = { object: object; length: number; key: PropertyKey | undefined; answer: unknown };
  // The handlers' prototype, with none a program could add traps to. Only built-ins see a snapshot; the traps
  // they do not use forward too, reporting configurable to keep the invariants of an empty target.
  const traps = {
    __proto__: null,
    get(this: Snapshot, _target: object, key: PropertyKey) {
      if (key === "length") return this.length;
      return key === this.key ? this.answer : get(this.object, key, this.object);
    },
    set(this: Snapshot, _target: object, key: PropertyKey, value: unknown) {
      return set(this.object, key, value, this.object);
    },
    has(this: Snapshot, _target: object, key: PropertyKey) {
      return has(this.object, key);
    },
    deleteProperty(this: Snapshot, _target: object, key: PropertyKey) {
      return deleteProperty(this.object, key);
    },
    defineProperty(this: Snapshot, _target: object, key: PropertyKey, descriptor: PropertyDescriptor) {
      return reflectDefineProperty(this.object, key, descriptor);
    },
    getOwnPropertyDescriptor(this: Snapshot, target: object, key: PropertyKey) {
      if (key === "length")
        return { __proto__: null, value: this.length, writable: true, configurable: !isArray(target) };
      const found = reflectDescriptorOf(this.object, key);
      if (found !== undefined) found.configurable = true;
      return found;
    },
    ownKeys(this: Snapshot) {
      return ownKeys(this.object);
    },
  };
  return {
    isProxy,
    ownField,
    /** A genuine array with no species of its own: Array's, unless Array.prototype's changed (see speciesIsPlain). */
    plainArray: (value: unknown): value is unknown[] =>
      isArray(value) && !isProxy(value) && getPrototypeOf(value) === ArrayPrototype && !hasOwn(value, "constructor"),
    /** Nothing of the program runs when a built-in makes its result by the species of a plain array. */
    speciesIsPlain: (): boolean =>
      ownField(ArrayPrototype, "constructor", "value") === ArrayCtor &&
      ownField(ArrayCtor, species, "get") === speciesGetter,
    /** Elements a guarded method goes over at most. */
    maxElements: 10_000_000,
    /** Throws the guard's RangeError when `length` is over `most`; `label` names the method. */
    ensureWithin(label: string, length: number, most: number): void {
      if (length > most) {
        throw new RangeErrorCtor(`${label} was called on ${length} elements; in this sandbox it takes at most ${most}`);
      }
    },
    /** ToLength(object.length), read once. */
    lengthOf: (object: object): number => toLength((object as { length: unknown }).length),
    /** The length of `object` if nothing can change it before a built-in reads it, else -1. */
    steadyLength(object: object): number {
      // A proxy runs its traps at every read; any other object's own data property reads as it is. Field by
      // field: a descriptor inherits from Object.prototype, where a program may have put a getter.
      if (isProxy(object)) return -1;
      const own = getOwnPropertyDescriptor(object, "length");
      if (own === undefined || !hasOwn(own, "value") || typeof own.value !== "number") return -1;
      return toLength(own.value);
    },
    /** A stand-in for `object` whose `length` is `length` (and whose `key`, if given, is `answer`). */
    snapshot(object: object, length: number, key?: PropertyKey, answer?: unknown): object {
      const handler = { __proto__: traps, object, length, key, answer } as ProxyHandler<object>;
      // IsArray(snapshot) is IsArray(object): map, filter, splice and concat make their result by its species.
      return new NativeProxy(isArray(object) ? [] : {}, handler);
    },
    /** Puts `wrapped` (a method, as the built-ins are: no constructor) where `owner[name]` was, as it was. */
    replace(owner: object, name: string, wrapped: (...args: never[]) => unknown): void {
      const descriptor = getOwnPropertyDescriptor(owner, name)!;
      defineProperty(wrapped, "length", { value: (descriptor.value as { length: number }).length });
      defineProperty(owner, name, { ...descriptor, value: wrapped });
    },
  };
}

/**
 * Guards the methods that loop over their receiver, and `Array.from`. No snapshot reaches the
 * program: callbacks get the receiver as their last argument, and methods return it, not the snapshot.
 */
export function installArrayGuard(tools: ArrayGuardTools): void {
  "use strict";
  const { isProxy, ownField, maxElements, ensureWithin, lengthOf, steadyLength, snapshot, replace } = tools;
  const ArrayCtor = Array;
  const ArrayPrototype = Array.prototype as unknown as Record<PropertyKey, (...args: unknown[]) => unknown>;
  const ObjectPrototype = Object.prototype;
  const { apply, getPrototypeOf } = Reflect;
  const { hasOwn } = Object;
  const iteratorKey = Symbol.iterator;
  const nativeFrom = ArrayCtor.from as (...args: unknown[]) => unknown[];
  const nativeValues = ArrayPrototype.values;
  const isArray = Array.isArray;
  const ObjectCtor = Object;
  const MAX_SORTED = 1_000_000; // sorting compares, so it gets less
  const looping = (
    "indexOf lastIndexOf includes join toLocaleString slice fill reverse copyWithin splice shift unshift " +
    "toReversed toSpliced with sort toSorted"
  ).split(" ");
  // Their callback gets (value, index, array); reduce's (accumulator, value, index, array).
  const calling = "forEach every some find findIndex findLast findLastIndex map filter".split(" ");
  const reducing = ["reduce", "reduceRight"];
  /** The callback the built-in calls: it hands the program's callback the receiver instead of the snapshot. */
  function passingReceiver(callback: unknown, object: object, receiverAt: number): unknown {
    // Not callable: the built-in throws its own TypeError.
    if (typeof callback !== "function") return callback;
    return function (this: unknown) {
      arguments[receiverAt] = object;
      return apply(callback, this, arguments);
    };
  }
  function guard(name: string, receiverAt: number): void {
    const native = ArrayPrototype[name];
    if (typeof native !== "function") return;
    const label = `Array.prototype.${name}`;
    const most = name === "sort" || name === "toSorted" ? MAX_SORTED : maxElements;
    const wrapped = {
      [name](this: unknown, ...args: unknown[]) {
        // Most calls: a genuine array, whose length is a data property; nothing runs before the built-in reads it.
        if (isArray(this) && !isProxy(this)) {
          const length = (this as unknown[]).length;
          if (length > most) ensureWithin(label, length, most);
          return apply(native, this, args);
        }
        // null and undefined go to the built-in, which throws its own TypeError.
        if (this === null || this === undefined) return apply(native, this, args);
        const object = ObjectCtor(this);
        const steady = steadyLength(object);
        if (steady >= 0) {
          ensureWithin(label, steady, most);
          return apply(native, this, args);
        }
        const length = lengthOf(object);
        ensureWithin(label, length, most);
        const view = snapshot(object, length);
        if (receiverAt !== 0 && args.length > 0) args[0] = passingReceiver(args[0], object, receiverAt);
        const result = apply(native, view, args);
        return result === view ? object : result;
      },
    }[name]!;
    replace(ArrayPrototype, name, wrapped);
  }

  for (let index = 0; index < looping.length; index++) guard(looping[index]!, 0);
  for (let index = 0; index < calling.length; index++) guard(calling[index]!, 2);
  for (let index = 0; index < reducing.length; index++) guard(reducing[index]!, 3);

  // `Array.from` goes over an array-like as the methods above over their receiver.
  const fromMethod = {
    from(this: unknown, ...args: unknown[]) {
      // The arguments as given: V8 copies an array fast only when called with no mapper at all.
      const items = args.length > 0 ? args[0] : undefined;
      if (items === null || items === undefined) return apply(nativeFrom, this, args);
      const iterator = (items as Record<symbol, unknown>)[iteratorKey];
      const object = ObjectCtor(items);
      // Straight to the built-in when it reads the length checked here: an own data length (an array-like's, or a
      // genuine array's with the built-in iterator) and only data properties met looking for the iterator again.
      const prototype = getPrototypeOf(object);
      const straight =
        !hasOwn(object, iteratorKey) &&
        (iterator == null
          ? prototype === ObjectPrototype && !hasOwn(ObjectPrototype, iteratorKey)
          : iterator === nativeValues &&
            prototype === ArrayPrototype &&
            ownField(prototype, iteratorKey, "value") === iterator);
      const steady = straight ? steadyLength(object) : -1;
      if (steady >= 0) {
        ensureWithin("Array.from", steady, maxElements);
        return apply(nativeFrom, this, args);
      }
      if (iterator == null) {
        // An array-like: the built-in goes over a snapshot of the length read here, which has no iterator either.
        const length = lengthOf(object);
        ensureWithin("Array.from", length, maxElements);
        args[0] = snapshot(object, length, iteratorKey, undefined);
        return apply(nativeFrom, this, args);
      }
      // The built-in gets the method read here: a getter answering nothing the second time would send it the
      // array-like way, over a length never checked. An iterator it steps by calling `next`.
      const method = typeof iterator === "function" ? () => apply(iterator, items, []) : iterator;
      args[0] = { __proto__: null, [iteratorKey]: method };
      return apply(nativeFrom, this, args);
    },
  };
  replace(ArrayCtor, "from", fromMethod.from);
}
