import type { CodecBase64 } from "./value-codec-base64.js";
import type { CodecIntrinsics } from "./value-codec-intrinsics.js";

/**
 * Values to wire text: returns `encode(value, sortKeys)`, which is undefined for `undefined`, as
 * in JSON.stringify. Self-contained (see value-codec.ts): its built-ins come from `intrinsics` only.
 */
export function createEncoder(intrinsics: CodecIntrinsics, base64: CodecBase64) {
  const {
    TAG,
    MAX_DEPTH,
    JSONStringify,
    ObjectKeys,
    ObjectGetPrototypeOf,
    ObjectPrototype,
    ArrayIsArray,
    NumberIsFinite,
  } = intrinsics;
  const { ReflectApply, ArraySort, ErrorCtor, typedArrayTagGetter, DateGetTime, DateToISOString } = intrinsics;
  const { MapSizeGetter, SetSizeGetter, PromiseThen, ArrayBufferByteLength, ErrorIsError, hasBrand } = intrinsics;
  const fail: CodecIntrinsics["fail"] = intrinsics.fail;
  const bytesToBase64 = base64.bytesToBase64;

  /**
   * The path of the value being encoded, for error messages only: `keys[depth]` is the key or
   * index taken below `stack[depth]`, so the path is built when something fails, never per key.
   */
  function pathOf(keys: Array<string | number>, depth: number): string {
    let path = "";
    for (let index = 0; index < depth; index++) {
      const key = keys[index]!;
      path = typeof key === "number" ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    }
    return path;
  }

  function encodeAt(
    value: unknown,
    stack: object[],
    keys: Array<string | number>,
    sortKeys: boolean,
  ): string | undefined {
    switch (typeof value) {
      case "string":
        return JSONStringify(value);
      case "number":
        // JSON's text of a finite number is its ToString, which needs no built-in call here.
        return value === value && value !== Infinity && value !== -Infinity ? `${value}` : "null";
      case "boolean":
        return value ? "true" : "false";
      case "undefined":
        return undefined;
      case "bigint":
        return `{"${TAG}":"bigint","v":"${value}"}`;
      case "function":
        return fail(pathOf(keys, stack.length), "a function");
      case "symbol":
        return fail(pathOf(keys, stack.length), "a symbol");
    }
    if (value === null) return "null";
    const object = value as object;
    const depth = stack.length;
    if (depth >= MAX_DEPTH) fail(pathOf(keys, depth), `a value nested more than ${MAX_DEPTH} levels deep`);
    for (let index = 0; index < depth; index++) {
      if (stack[index] === object) fail(pathOf(keys, depth), "a circular reference");
    }
    // Arrays and plain objects are by far the common case; the brand checks below throw and
    // catch internally, which costs microseconds per object, so plain data skips them.
    const prototype = ArrayIsArray(object) ? null : ObjectGetPrototypeOf(object);
    if (prototype !== null && prototype !== ObjectPrototype) {
      const typedArrayTag = ReflectApply(typedArrayTagGetter, object, []);
      if (typedArrayTag === "Uint8Array") {
        return `{"${TAG}":"bytes","v":"${bytesToBase64(object as Uint8Array)}"}`;
      }
      if (typedArrayTag !== undefined) fail(pathOf(keys, depth), `a ${typedArrayTag} (use Uint8Array for bytes)`);
      if (hasBrand(ArrayBufferByteLength, object))
        fail(pathOf(keys, depth), "an ArrayBuffer (wrap it in a Uint8Array)");
      if (hasBrand(DateGetTime, object)) {
        const time = ReflectApply(DateGetTime, object, []) as number;
        return NumberIsFinite(time) ? JSONStringify(ReflectApply(DateToISOString, object, [])) : "null";
      }
      if (hasBrand(MapSizeGetter, object)) fail(pathOf(keys, depth), "a Map (convert it with Object.fromEntries)");
      if (hasBrand(SetSizeGetter, object)) fail(pathOf(keys, depth), "a Set (convert it with Array.from)");
      if (hasBrand(PromiseThen, object) && prototype === Promise.prototype)
        fail(pathOf(keys, depth), "a Promise (await it first)");
    }
    stack[depth] = object;
    try {
      if (ArrayIsArray(object)) {
        const array = object as unknown[];
        const length = array.length;
        let out = "[";
        for (let index = 0; index < length; index++) {
          if (index > 0) out += ",";
          keys[depth] = index;
          const item = encodeAt(array[index], stack, keys, sortKeys);
          out += item === undefined ? "null" : item;
        }
        return out + "]";
      }
      const isError = ErrorIsError ? ErrorIsError(object) : object instanceof ErrorCtor;
      const source: Record<string, unknown> = isError
        ? { name: String((object as Error).name), message: String((object as Error).message) }
        : (object as Record<string, unknown>);
      const names = ObjectKeys(source);
      if (sortKeys) ReflectApply(ArraySort, names, []);
      let out = "{";
      let first = true;
      let hasTagKey = false;
      for (let index = 0; index < names.length; index++) {
        const key = names[index]!;
        if (key === TAG) hasTagKey = true;
        keys[depth] = key;
        const item = encodeAt(source[key], stack, keys, sortKeys);
        if (item === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += JSONStringify(key) + ":" + item;
      }
      out += "}";
      return hasTagKey ? `{"${TAG}":"object","v":${out}}` : out;
    } finally {
      stack.length = depth;
    }
  }

  return function encode(value: unknown, sortKeys: boolean): string | undefined {
    return encodeAt(value, [], [], sortKeys);
  };
}
