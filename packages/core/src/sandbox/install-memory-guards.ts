/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Closes the ways a program could hold host memory that the isolate's heap limit
 * does not count (like WebAssembly, which setup deletes):
 *
 * - Resizable `ArrayBuffer`s and growable `SharedArrayBuffer`s (`{ maxByteLength }`) reserve and
 *   commit their memory outside the allocator that enforces the limit: a 16 MB sandbox held 3 GB.
 *   The constructors refuse `maxByteLength`; fixed-length buffers work as before.
 * - `Intl` objects keep ICU data in host memory, a few to 30 KB each behind a small heap object:
 *   a 32 MB sandbox creating formatters in a loop took the host to 4.4 GB. A pass may create at
 *   most `maxIntlObjects` of them (constructors, `segment()` and its iterators, `Locale`'s
 *   `maximize`/`minimize`); `toLocaleString` and friends, which keep nothing, are not counted.
 *
 * `Intl` is guarded when the program first reads it: the namespace is reachable only from the
 * global, and guarding it up front cost every pass ~0.4 ms. That code may run after the program
 * poisoned prototypes, so it uses only built-ins captured here, index loops and null-prototype
 * descriptors. `prepareIntl` (the UTC time zone, with `deterministic`) runs just before.
 */
export function installMemoryGuards(
  global: Record<string, unknown>,
  maxIntlObjects: number,
  prepareIntl?: (intl: Record<string, unknown>) => void,
): void {
  "use strict";
  const ReflectConstruct = Reflect.construct;
  const ReflectApply = Reflect.apply;
  const ReflectOwnKeys = Reflect.ownKeys;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectHasOwn = Object.hasOwn;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const SymbolIterator = Symbol.iterator;
  const FIELDS = ["value", "writable", "get", "set", "enumerable", "configurable"];

  /** Defines `key` on `target` as a data property, from a null-prototype descriptor. */
  function defineValue(target: object, key: PropertyKey, value: unknown, writable: boolean): void {
    ObjectDefineProperty(target, key, {
      __proto__: null,
      value,
      writable,
      configurable: true,
      enumerable: false,
    } as PropertyDescriptor);
  }

  /** Copies an own property, its descriptor read field by field (a descriptor object inherits from Object.prototype). */
  function copyOwn(from: object, to: object, key: PropertyKey): void {
    const found = ObjectGetOwnPropertyDescriptor(from, key) as Record<string, unknown> | undefined;
    if (!found) return;
    const descriptor = { __proto__: null } as unknown as Record<string, unknown>;
    for (let index = 0; index < FIELDS.length; index++) {
      const field = FIELDS[index]!;
      if (ObjectHasOwn(found, field)) descriptor[field] = found[field];
    }
    ObjectDefineProperty(to, key, descriptor as PropertyDescriptor);
  }

  /** A stand-in for `holder[name]`: same statics and prototype (whose `constructor` now names it). */
  function replaceConstructor(
    holder: Record<string, unknown>,
    name: string,
    replacement: (...args: never[]) => unknown,
  ): void {
    const original = holder[name] as (...args: never[]) => unknown;
    const keys = ReflectOwnKeys(original);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      if (key !== "name" && key !== "length") copyOwn(original, replacement, key);
    }
    ObjectDefineProperty(replacement, "name", {
      __proto__: null,
      value: name,
      configurable: true,
    } as PropertyDescriptor);
    copyOwn(original, replacement, "length");
    const prototype = ObjectHasOwn(original, "prototype")
      ? (original as unknown as { prototype: object }).prototype
      : undefined;
    if (prototype) defineValue(prototype, "constructor", replacement, true);
    defineValue(holder, name, replacement, true);
  }

  // Written out here rather than through replaceConstructor: this runs in every pass, before any
  // model code, and a helper called here would be compiled lazily in each isolate (~0.2 ms).
  const buffers = ["ArrayBuffer", "SharedArrayBuffer"];
  for (let index = 0; index < buffers.length; index++) {
    const name = buffers[index]!;
    const original = global[name] as (new (length: number) => object) | undefined;
    if (typeof original !== "function") continue;
    const replacement = function (this: unknown, length?: unknown, options?: unknown) {
      if (!new.target) throw new TypeErrorCtor(`Constructor ${name} requires 'new'`);
      // Converted here, so no program code runs while the original constructor is on the stack.
      const byteLength = +(length as number);
      if ((typeof options === "object" && options !== null) || typeof options === "function") {
        if ((options as { maxByteLength?: unknown }).maxByteLength !== undefined) {
          throw new RangeErrorCtor(
            `${name} with maxByteLength is not available in the sandbox: its memory is outside the heap limit (use a fixed length)`,
          );
        }
      }
      return ReflectConstruct(original, [byteLength], new.target);
    };
    // Before any model code: the descriptors' prototype is still the pristine Object.prototype.
    const keys = ReflectOwnKeys(original);
    for (let key = 0; key < keys.length; key++)
      ObjectDefineProperty(replacement, keys[key]!, ObjectGetOwnPropertyDescriptor(original, keys[key]!)!);
    ObjectDefineProperty((original as unknown as { prototype: object }).prototype, "constructor", {
      value: replacement,
      writable: true,
      configurable: true,
      enumerable: false,
    });
    ObjectDefineProperty(global, name, { value: replacement, writable: true, configurable: true, enumerable: false });
  }

  const intl = global.Intl as Record<string, unknown> | undefined;
  if (!intl) return;
  const settle = (value: unknown): void => defineValue(global, "Intl", value, true);
  ObjectDefineProperty(global, "Intl", {
    configurable: true,
    enumerable: false,
    get() {
      if (prepareIntl) prepareIntl(intl);
      guardIntl(intl);
      // Only once guarded: should guarding ever fail, the next read tries again, never unguarded.
      settle(intl);
      return intl;
    },
    set: settle,
  });

  /** Counts the Intl objects a pass creates; runs once, on the program's first read of `Intl`. */
  function guardIntl(namespace: Record<string, unknown>): void {
    let created = 0;
    function count(): void {
      created++;
      if (created > maxIntlObjects) {
        throw new RangeErrorCtor(
          `a pass may create at most ${maxIntlObjects} Intl objects (their memory is outside the heap limit): create a formatter once and reuse it`,
        );
      }
    }
    function countCalls(
      holder: Record<PropertyKey, unknown>,
      key: PropertyKey,
      afterFirst?: (result: unknown) => void,
    ): void {
      const method = holder[key] as ((...args: unknown[]) => unknown) | undefined;
      if (typeof method !== "function") return;
      let first = true;
      const counted = {
        [key](this: unknown, ...args: unknown[]) {
          count();
          const result = ReflectApply(method, this, args);
          if (first && afterFirst) afterFirst(result);
          first = false;
          return result;
        },
      }[key as string];
      defineValue(holder, key, counted, true);
    }

    const names = ReflectOwnKeys(namespace);
    for (let index = 0; index < names.length; index++) {
      const name = names[index];
      if (typeof name !== "string") continue;
      const original = namespace[name];
      if (typeof original !== "function" || !ObjectHasOwn(original, "prototype")) continue;
      const constructor = original as new (...args: unknown[]) => object;
      replaceConstructor(namespace, name, function (this: unknown, ...args: unknown[]) {
        count();
        // Collator, DateTimeFormat and NumberFormat may be called without `new` (ECMA-402).
        return new.target
          ? ReflectConstruct(constructor, args, new.target)
          : ReflectApply(constructor as unknown as (...args: unknown[]) => unknown, this, args);
      });
    }
    const segmenter = namespace.Segmenter as { prototype: Record<PropertyKey, unknown> } | undefined;
    if (segmenter) {
      // The segments' prototype is only reachable from a segments object: patched on first use.
      countCalls(segmenter.prototype, "segment", (segments) =>
        countCalls(ObjectGetPrototypeOf(segments) as Record<PropertyKey, unknown>, SymbolIterator),
      );
    }
    const locale = namespace.Locale as { prototype: Record<PropertyKey, unknown> } | undefined;
    if (locale) {
      countCalls(locale.prototype, "maximize");
      countCalls(locale.prototype, "minimize");
    }
  }
}
