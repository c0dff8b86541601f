/**
 * The one codec for values that cross the sandbox boundary or go into the durable log.
 *
 * Wire form: JSON text. Plain data stays as it is; the extra types that JSON lacks are tagged:
 *   bigint      → {"$cm":"bigint","v":"123"}
 *   Uint8Array  → {"$cm":"bytes","v":"<base64>"}
 *   an object that itself has a "$cm" key → {"$cm":"object","v":{…}} (so user data never
 *   decodes as a tag).
 *
 * `createValueCodec` is written without any reference to module scope because its source text
 * is also installed inside the sandbox (see prelude.ts): the host and the sandbox run the same
 * code, so they agree on the wire form and on canonical (key-sorted) text by construction.
 * Inside the sandbox it runs before any model code, so it captures the intrinsics it uses: code
 * that later poisons prototypes cannot change how values are encoded.
 */
export interface ValueCodec {
  /** Encodes a value; throws a `ValueCodecError` naming the path of what cannot be encoded. */
  encode(value: unknown, options?: { sortKeys?: boolean }): string | undefined;
  /** Decodes wire text; throws a `ValueCodecError` on malformed input. */
  decode(text: string): unknown;
  /** Key-order-insensitive text of wire text, for comparing arguments during replay. */
  canonical(text: string): string;
}

/** Thrown by the codec; `code` is what the runtime reports. */
export interface ValueCodecErrorShape {
  name: "ValueCodecError";
  code: "NOT_SERIALIZABLE";
  message: string;
}

export function createValueCodec(): ValueCodec {
  const TAG = "$cm";
  const MAX_DEPTH = 512;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const ObjectKeys = Object.keys;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectPrototype = Object.prototype;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const ArrayIsArray = Array.isArray;
  const NumberIsFinite = Number.isFinite;
  const ReflectApply = Reflect.apply;
  const ArraySort = Array.prototype.sort;
  const ErrorCtor = Error;
  const BigIntCtor = BigInt;
  const Uint8ArrayCtor = Uint8Array;
  const typedArrayTagGetter = Object.getOwnPropertyDescriptor(
    ObjectGetPrototypeOf(Uint8Array.prototype),
    Symbol.toStringTag,
  )!.get!;
  // The intrinsic length: an own "length" property on the array must not change what is encoded.
  const typedArrayLengthGetter = Object.getOwnPropertyDescriptor(ObjectGetPrototypeOf(Uint8Array.prototype), "length")!.get!;
  const DateGetTime = Date.prototype.getTime;
  const DateToISOString = Date.prototype.toISOString;
  const MapSizeGetter = Object.getOwnPropertyDescriptor(Map.prototype, "size")!.get!;
  const SetSizeGetter = Object.getOwnPropertyDescriptor(Set.prototype, "size")!.get!;
  const PromiseThen = Promise.prototype.then;
  const ArrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")!.get!;
  const ErrorIsError: ((value: unknown) => boolean) | undefined = (ErrorCtor as unknown as { isError?: (value: unknown) => boolean }).isError;
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const B64_INDEX: Record<string, number> = ObjectCreate(null);
  for (let index = 0; index < 64; index++) B64_INDEX[B64.charAt(index)] = index;

  function fail(path: string, what: string): never {
    const error = new ErrorCtor(`${what} at ${path || "the top level"} cannot be stored or passed: use plain JSON data (objects, arrays, strings, numbers, booleans, null), Uint8Array or bigint`);
    ObjectDefineProperty(error, "name", { value: "ValueCodecError" });
    ObjectDefineProperty(error, "code", { value: "NOT_SERIALIZABLE" });
    throw error;
  }

  function hasBrand(getter: () => unknown, value: object): boolean {
    try {
      ReflectApply(getter, value, []);
      return true;
    } catch {
      return false;
    }
  }

  function bytesToBase64(bytes: Uint8Array): string {
    let out = "";
    const length = ReflectApply(typedArrayLengthGetter, bytes, []) as number;
    let index = 0;
    for (; index + 2 < length; index += 3) {
      const n = (bytes[index]! << 16) | (bytes[index + 1]! << 8) | bytes[index + 2]!;
      out += B64.charAt((n >> 18) & 63) + B64.charAt((n >> 12) & 63) + B64.charAt((n >> 6) & 63) + B64.charAt(n & 63);
    }
    if (index < length) {
      const n = (bytes[index]! << 16) | (index + 1 < length ? bytes[index + 1]! << 8 : 0);
      out += B64.charAt((n >> 18) & 63) + B64.charAt((n >> 12) & 63);
      out += index + 1 < length ? B64.charAt((n >> 6) & 63) + "=" : "==";
    }
    return out;
  }

  function base64ToBytes(text: string): Uint8Array {
    if (typeof text !== "string" || text.length % 4 !== 0) fail("", "malformed base64 bytes");
    let padding = 0;
    if (text.endsWith("==")) padding = 2;
    else if (text.endsWith("=")) padding = 1;
    const bytes = new Uint8ArrayCtor((text.length / 4) * 3 - padding);
    let byteIndex = 0;
    for (let index = 0; index < text.length; index += 4) {
      let n = 0;
      for (let offset = 0; offset < 4; offset++) {
        const char = text.charAt(index + offset);
        const digit = char === "=" ? 0 : B64_INDEX[char];
        if (digit === undefined) fail("", "malformed base64 bytes");
        n = (n << 6) | digit;
      }
      if (byteIndex < bytes.length) bytes[byteIndex++] = (n >> 16) & 255;
      if (byteIndex < bytes.length) bytes[byteIndex++] = (n >> 8) & 255;
      if (byteIndex < bytes.length) bytes[byteIndex++] = n & 255;
    }
    return bytes;
  }

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

  function encodeAt(value: unknown, stack: object[], keys: Array<string | number>, sortKeys: boolean): string | undefined {
    switch (typeof value) {
      case "string":
        return JSONStringify(value);
      case "number":
        return NumberIsFinite(value) ? JSONStringify(value) : "null";
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
      if (hasBrand(ArrayBufferByteLength, object)) fail(pathOf(keys, depth), "an ArrayBuffer (wrap it in a Uint8Array)");
      if (hasBrand(DateGetTime, object)) {
        const time = ReflectApply(DateGetTime, object, []) as number;
        return NumberIsFinite(time) ? JSONStringify(ReflectApply(DateToISOString, object, [])) : "null";
      }
      if (hasBrand(MapSizeGetter, object)) fail(pathOf(keys, depth), "a Map (convert it with Object.fromEntries)");
      if (hasBrand(SetSizeGetter, object)) fail(pathOf(keys, depth), "a Set (convert it with Array.from)");
      if (hasBrand(PromiseThen, object) && prototype === Promise.prototype) fail(pathOf(keys, depth), "a Promise (await it first)");
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

  // Parsed JSON is revived in place, and a property is written only when its value changed (a
  // tag became a bigint or bytes): plain data, the common case, is only read.
  function revive(value: unknown): unknown {
    if (value === null || typeof value !== "object") return value;
    if (ArrayIsArray(value)) {
      const array = value as unknown[];
      for (let index = 0; index < array.length; index++) {
        const item = array[index];
        if (item === null || typeof item !== "object") continue;
        const revived = revive(item);
        if (revived !== item) array[index] = revived;
      }
      return array;
    }
    const record = value as Record<string, unknown>;
    const tag = record[TAG];
    if (tag !== undefined) {
      const inner = record.v;
      if (tag === "bigint" && typeof inner === "string") {
        try {
          return BigIntCtor(inner);
        } catch {
          return fail("", "a malformed bigint");
        }
      }
      if (tag === "bytes" && typeof inner === "string") return base64ToBytes(inner);
      if (tag === "object" && inner !== null && typeof inner === "object" && !ArrayIsArray(inner)) {
        return reviveObject(inner as Record<string, unknown>);
      }
      return fail("", `an unknown tagged value (${String(tag)})`);
    }
    return reviveObject(record);
  }

  function reviveObject(record: Record<string, unknown>): Record<string, unknown> {
    const keys = ObjectKeys(record);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const item = record[key];
      if (item === null || typeof item !== "object") continue;
      const revived = revive(item);
      // "__proto__" from JSON.parse is an own data property; keep it one.
      if (revived !== item) ObjectDefineProperty(record, key, { value: revived, writable: true, enumerable: true, configurable: true });
    }
    return record;
  }

  function parse(text: string): unknown {
    if (typeof text !== "string") fail("", "non-text wire data");
    try {
      return JSONParse(text);
    } catch (error) {
      return fail("", `malformed wire text (${(error as Error).message})`);
    }
  }

  return {
    encode(value, options) {
      return encodeAt(value, [], [], options?.sortKeys === true);
    },
    decode(text) {
      try {
        return revive(parse(text));
      } catch (error) {
        if ((error as { name?: unknown }).name === "ValueCodecError") throw error;
        return fail("", `wire text that could not be decoded (${(error as Error).message})`);
      }
    },
    canonical(text) {
      // Re-encode with sorted keys; tags survive because they decode to the same value.
      return encodeAt(revive(parse(text)), [], [], true) ?? "undefined";
    },
  };
}

/** The codec instance for the host realm. */
export const valueCodec: ValueCodec = createValueCodec();

/** True when `error` came from the codec (in either realm). */
export function isValueCodecError(error: unknown): error is ValueCodecErrorShape {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "ValueCodecError";
}
