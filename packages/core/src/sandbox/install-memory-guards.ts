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
 */
export function installMemoryGuards(global: Record<string, unknown>, maxIntlObjects: number): void {
  "use strict";
  const ReflectConstruct = Reflect.construct;
  const ReflectApply = Reflect.apply;
  const ReflectOwnKeys = Reflect.ownKeys;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const SymbolIterator = Symbol.iterator;

  /** A stand-in for `original`: same statics and prototype (whose `constructor` now names it). */
  function replaceConstructor(holder: Record<string, unknown>, name: string, replacement: (...args: never[]) => unknown): void {
    const original = holder[name] as (...args: never[]) => unknown;
    for (const key of ReflectOwnKeys(original)) {
      if (key === "name" || key === "length") continue;
      ObjectDefineProperty(replacement, key, ObjectGetOwnPropertyDescriptor(original, key)!);
    }
    ObjectDefineProperty(replacement, "name", { value: name, configurable: true });
    ObjectDefineProperty(replacement, "length", { value: original.length, configurable: true });
    const prototype = (original as unknown as { prototype?: object }).prototype;
    if (prototype) ObjectDefineProperty(prototype, "constructor", { value: replacement, writable: true, configurable: true });
    ObjectDefineProperty(holder, name, { value: replacement, writable: true, configurable: true, enumerable: false });
  }

  for (const name of ["ArrayBuffer", "SharedArrayBuffer"]) {
    const original = global[name] as (new (length: number) => object) | undefined;
    if (typeof original !== "function") continue;
    replaceConstructor(global, name, function (this: unknown, length?: unknown, options?: unknown) {
      if (!new.target) throw new TypeErrorCtor(`Constructor ${name} requires 'new'`);
      // Converted here, so no program code runs while the original constructor is on the stack.
      const byteLength = +(length as number);
      if ((typeof options === "object" && options !== null) || typeof options === "function") {
        if ((options as { maxByteLength?: unknown }).maxByteLength !== undefined) {
          throw new RangeErrorCtor(`${name} with maxByteLength is not available in the sandbox: its memory is outside the heap limit (use a fixed length)`);
        }
      }
      return ReflectConstruct(original, [byteLength], new.target);
    });
  }

  const intl = global.Intl as Record<string, unknown> | undefined;
  if (!intl) return;
  let created = 0;
  function count(): void {
    created++;
    if (created > maxIntlObjects) {
      throw new RangeErrorCtor(`a pass may create at most ${maxIntlObjects} Intl objects (their memory is outside the heap limit): create a formatter once and reuse it`);
    }
  }
  function countCalls(holder: Record<PropertyKey, unknown>, key: PropertyKey, afterFirst?: (result: unknown) => void): void {
    const method = holder[key] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof method !== "function") return;
    let first = true;
    ObjectDefineProperty(holder, key, {
      value: {
        [key](this: unknown, ...args: unknown[]) {
          count();
          const result = ReflectApply(method, this, args);
          if (first && afterFirst) afterFirst(result);
          first = false;
          return result;
        },
      }[key as string],
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }

  for (const name of ReflectOwnKeys(intl)) {
    if (typeof name !== "string") continue;
    const original = intl[name];
    if (typeof original !== "function" || !(original as { prototype?: unknown }).prototype) continue;
    const constructor = original as new (...args: unknown[]) => object;
    replaceConstructor(intl, name, function (this: unknown, ...args: unknown[]) {
      count();
      // Collator, DateTimeFormat and NumberFormat may be called without `new` (ECMA-402).
      return new.target ? ReflectConstruct(constructor, args, new.target) : ReflectApply(constructor as unknown as (...args: unknown[]) => unknown, this, args);
    });
  }
  const segmenter = intl.Segmenter as { prototype: Record<PropertyKey, unknown> } | undefined;
  if (segmenter) {
    // The segments' prototype is only reachable from a segments object: patched on first use.
    countCalls(segmenter.prototype, "segment", (segments) => countCalls(ObjectGetPrototypeOf(segments) as Record<PropertyKey, unknown>, SymbolIterator));
  }
  const locale = intl.Locale as { prototype: Record<PropertyKey, unknown> } | undefined;
  if (locale) {
    countCalls(locale.prototype, "maximize");
    countCalls(locale.prototype, "minimize");
  }
}
