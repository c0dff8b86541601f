import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. One of the guards on memory the isolate's heap limit does not count (with
 * installBufferGuards): `Intl` objects keep ICU data in host memory, a few to 30 KB each behind a
 * small heap object, and a 32 MB sandbox creating formatters in a loop took the host to 4.4 GB.
 * A pass may create at most `maxIntlObjects` of them (constructors, `segment()` and its
 * iterators, `Locale`'s `maximize`/`minimize`); `toLocaleString` and friends, which keep nothing,
 * are not counted (issue 17.2).
 *
 * `Intl` is guarded when the program first reads it: the namespace is reachable only from the
 * global, and guarding it up front cost every pass ~0.4 ms. That code may run after the program
 * poisoned prototypes, so it uses only built-ins captured before, index loops and null-prototype
 * descriptors. `prepareIntl` (the UTC time zone, with `deterministic`) runs just before.
 */
export function installIntlGuard(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  maxIntlObjects: number,
  prepareIntl?: (intl: Record<string, unknown>) => void,
): void {
  "use strict";
  const { ReflectConstruct, ReflectApply, ReflectOwnKeys, ObjectDefineProperty, ObjectGetPrototypeOf } = intrinsics;
  const { ObjectHasOwn, RangeErrorCtor, SymbolIterator, descriptorOf, defineValue, onFirstRead } = intrinsics;

  if (!global.Intl) return;
  onFirstRead(global, "Intl", (intl: Record<string, unknown>) => {
    if (prepareIntl) prepareIntl(intl);
    guardIntl(intl);
  });

  /** Copies an own property, if there is one, through a null-prototype descriptor. */
  function copyOwn(from: object, to: object, key: PropertyKey): void {
    const descriptor = descriptorOf(from, key);
    if (descriptor) ObjectDefineProperty(to, key, descriptor);
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
    if (prototype) defineValue(prototype, "constructor", replacement);
    defineValue(holder, name, replacement);
  }

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
      defineValue(holder, key, counted);
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
