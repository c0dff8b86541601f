import type { CodecIntrinsics } from "./value-codec-intrinsics.js";

/** Base64 of bytes, shared by the encoder and the decoder. */
export type CodecBase64 = ReturnType<typeof createBase64>;

/** Standard base64 (with padding) of a Uint8Array, and back. Self-contained (see value-codec.ts). */
export function createBase64(intrinsics: CodecIntrinsics) {
  const { B64, B64_INDEX, ReflectApply, typedArrayLengthGetter, Uint8ArrayCtor } = intrinsics;
  // Annotated so that the compiler knows a call to it does not return.
  const fail: CodecIntrinsics["fail"] = intrinsics.fail;

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

  // Null prototype: see captureCodecIntrinsics.
  return { __proto__: null, bytesToBase64, base64ToBytes };
}
