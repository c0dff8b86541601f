/** What `captureSandboxIntrinsics` captured; the prelude's installers take their built-ins from here. */
export type SandboxIntrinsics = ReturnType<typeof captureSandboxIntrinsics>;

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts), first, before any other part
 * and any model code: it may reference nothing outside itself. Captures the built-ins the
 * installers use while they are still pristine, so that a program that later replaces a global
 * or poisons a prototype cannot change what the installed code does. Every installer reads its
 * built-ins from this one record rather than capturing its own copies (installRandom excepted,
 * see there). The record is frozen, has a null prototype and never reaches a global.
 *
 * The helpers here run after the program may have poisoned prototypes (on its first read of
 * `Intl` or `Date`): captured built-ins, index loops and null-prototype descriptors only.
 */
export function captureSandboxIntrinsics() {
  "use strict";
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectHasOwn = Object.hasOwn;
  const FIELDS = ["value", "writable", "get", "set", "enumerable", "configurable"];

  /** An own property's descriptor with a null prototype, read field by field (a descriptor object inherits from Object.prototype). */
  function descriptorOf(from: object, key: PropertyKey): PropertyDescriptor | undefined {
    const found = ObjectGetOwnPropertyDescriptor(from, key) as Record<string, unknown> | undefined;
    if (!found) return undefined;
    const descriptor = { __proto__: null } as unknown as Record<string, unknown>;
    for (let index = 0; index < FIELDS.length; index++) {
      const field = FIELDS[index]!;
      if (ObjectHasOwn(found, field)) descriptor[field] = found[field];
    }
    return descriptor as PropertyDescriptor;
  }

  /** Defines `key` on `target` as a writable, configurable, non-enumerable data property. */
  function defineValue(target: object, key: PropertyKey, value: unknown): void {
    ObjectDefineProperty(target, key, {
      __proto__: null,
      value,
      writable: true,
      configurable: true,
      enumerable: false,
    } as PropertyDescriptor);
  }

  /**
   * Makes `global[name]` run `prepare` on the program's first read, then become a plain data
   * property again (a write before any read settles it too, unprepared: the program replaced it).
   */
  // Called in every pass, before model code: parenthesized so that V8 compiles it with the prelude
  // (from its code cache) instead of lazily in each isolate.
  // biome-ignore format: the parentheses are V8's hint to compile this function eagerly.
  const onFirstRead = (function onFirstRead(global: Record<string, unknown>, name: string, prepare: (value: never) => void): void {
    const value = global[name];
    const settle = (next: unknown): void => defineValue(global, name, next);
    ObjectDefineProperty(global, name, {
      __proto__: null,
      configurable: true,
      enumerable: false,
      get() {
        prepare(value as never);
        // Only once prepared: should preparing ever fail, the next read tries again, never unprepared.
        settle(value);
        return value;
      },
      set: settle,
    } as PropertyDescriptor);
  });

  return Object.freeze({
    __proto__: null,
    ReflectApply: Reflect.apply,
    ReflectConstruct: Reflect.construct,
    ReflectOwnKeys: Reflect.ownKeys,
    ObjectCtor: Object,
    ObjectCreate: Object.create,
    ObjectFreeze: Object.freeze,
    ObjectKeys: Object.keys,
    ObjectDefineProperty,
    ObjectGetOwnPropertyDescriptor,
    ObjectGetPrototypeOf: Object.getPrototypeOf,
    ObjectHasOwn,
    JSONStringify: JSON.stringify,
    JSONParse: JSON.parse,
    PromiseCtor: Promise,
    PromiseResolve: Promise.resolve.bind(Promise),
    PromiseReject: Promise.reject.bind(Promise),
    PromiseThen: Promise.prototype.then,
    MapCtor: Map,
    MapGet: Map.prototype.get,
    MapSet: Map.prototype.set,
    MapDelete: Map.prototype.delete,
    WeakMapCtor: WeakMap,
    WeakMapGet: WeakMap.prototype.get,
    WeakMapSet: WeakMap.prototype.set,
    ErrorCtor: Error,
    TypeErrorCtor: TypeError,
    RangeErrorCtor: RangeError,
    StringCtor: String,
    StringSlice: String.prototype.slice,
    MathFloor: Math.floor,
    MathCeil: Math.ceil,
    SymbolIterator: Symbol.iterator,
    descriptorOf,
    defineValue,
    onFirstRead,
  });
}
