import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. One of the guards on memory the isolate's heap limit does not count (with
 * installIntlGuard; setup deletes WebAssembly): resizable `ArrayBuffer`s and growable
 * `SharedArrayBuffer`s (`{ maxByteLength }`) reserve and commit their memory outside the
 * allocator that enforces the limit, and a 16 MB sandbox held 3 GB. The constructors refuse
 * `maxByteLength`; fixed-length buffers work as before (issue 17.2).
 */
export function installBufferGuards(intrinsics: SandboxIntrinsics, global: Record<string, unknown>): void {
  "use strict";
  const { ReflectConstruct, ReflectOwnKeys, ObjectDefineProperty, ObjectGetOwnPropertyDescriptor } = intrinsics;
  const { TypeErrorCtor, RangeErrorCtor } = intrinsics;

  // Written out here rather than through installIntlGuard's replaceConstructor (which does the same
  // for Intl): this runs in every pass, before any model code, and a helper called here would be
  // compiled lazily in each isolate (~0.2 ms).
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
}
