import type { CodecBase64 } from "./value-codec-base64.js";
import type { CodecIntrinsics } from "./value-codec-intrinsics.js";

/**
 * Wire text to values: `decode` reports any failure as a `ValueCodecError`; `read` parses and
 * revives the same way but throws errors as they are, for `canonical`. Self-contained (see
 * value-codec.ts): its built-ins come from `intrinsics` only.
 */
export function createDecoder(intrinsics: CodecIntrinsics, base64: CodecBase64) {
  const { TAG, JSONParse, ObjectKeys, ObjectDefineProperty, ArrayIsArray, BigIntCtor, ReflectApply, StringIndexOf } =
    intrinsics;
  const fail: CodecIntrinsics["fail"] = intrinsics.fail;
  const base64ToBytes = base64.base64ToBytes;
  const TAG_KEY = `"${TAG}"`;

  /**
   * Whether parsed text may hold the tag key: only if it spells `"$cm"` or uses a \u escape (the
   * one way JSON can write "$", "c" or "m" otherwise). Plain data, the common case, then skips
   * the revive walk.
   */
  function mayHoldTag(text: string): boolean {
    return ReflectApply(StringIndexOf, text, [TAG_KEY]) !== -1 || ReflectApply(StringIndexOf, text, ["\\u"]) !== -1;
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
      if (revived !== item)
        ObjectDefineProperty(record, key, { value: revived, writable: true, enumerable: true, configurable: true });
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
    // Null prototype: see captureCodecIntrinsics.
    __proto__: null,
    decode(text: string): unknown {
      try {
        const value = parse(text);
        // Only text that names the tag can hold a tagged value: the rest is plain JSON as parsed.
        return mayHoldTag(text) ? revive(value) : value;
      } catch (error) {
        if ((error as { name?: unknown }).name === "ValueCodecError") throw error;
        return fail("", `wire text that could not be decoded (${(error as Error).message})`);
      }
    },
    read(text: string): unknown {
      return revive(parse(text));
    },
  };
}
