import { createBase64 } from "./value-codec-base64.js";
import { createDecoder } from "./value-codec-decoder.js";
import { createEncoder } from "./value-codec-encoder.js";
import { captureCodecIntrinsics } from "./value-codec-intrinsics.js";

/**
 * The one codec for values that cross the sandbox boundary or go into the durable log.
 *
 * Wire form: JSON text. Plain data stays as it is; the extra types that JSON lacks are tagged:
 *   bigint      → {"$cm":"bigint","v":"123"}
 *   Uint8Array  → {"$cm":"bytes","v":"<base64>"}
 *   an object that itself has a "$cm" key → {"$cm":"object","v":{…}} (so user data never
 *   decodes as a tag).
 *
 * The codec is made of pieces (`captureCodecIntrinsics`, `createBase64`, `createEncoder`,
 * `createDecoder`, `composeValueCodec`), each written without any reference to module scope
 * because their source text is also installed inside the sandbox (see prelude.ts): the host and
 * the sandbox run the same code, so they agree on the wire form and on canonical (key-sorted)
 * text by construction. Inside the sandbox they run before any model code, and every intrinsic
 * they use is captured then: code that later poisons prototypes cannot change how values are
 * encoded.
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

/** The pieces `composeValueCodec` builds a codec from: this module's functions, or their copies in the sandbox. */
export interface ValueCodecParts {
  captureCodecIntrinsics: typeof captureCodecIntrinsics;
  createBase64: typeof createBase64;
  createEncoder: typeof createEncoder;
  createDecoder: typeof createDecoder;
}

/**
 * Builds a codec from its pieces, taken from `parts` rather than module scope so that the
 * sandbox can run it on the pieces' installed copies (see sandbox-setup.ts).
 *
 * @example
 * const codec = composeValueCodec({ captureCodecIntrinsics, createBase64, createEncoder, createDecoder });
 * codec.encode({ id: 1n }); // '{"id":{"$cm":"bigint","v":"1"}}'
 */
export function composeValueCodec(parts: ValueCodecParts): ValueCodec {
  const intrinsics = parts.captureCodecIntrinsics();
  const base64 = parts.createBase64(intrinsics);
  const encodeValue = parts.createEncoder(intrinsics, base64);
  // Taken out once: the decoder is a null-prototype object, not for reading on every call.
  const { decode, read } = parts.createDecoder(intrinsics, base64);
  return {
    encode(value, options) {
      return encodeValue(value, options?.sortKeys === true);
    },
    decode,
    canonical(text) {
      // Re-encode with sorted keys; tags survive because they decode to the same value.
      return encodeValue(read(text), true) ?? "undefined";
    },
  };
}

/**
 * A codec over this realm's intrinsics, captured now.
 *
 * @example
 * const codec = createValueCodec();
 * codec.decode(codec.encode({ bytes: new Uint8Array([1]) })!); // { bytes: Uint8Array [1] }
 */
export function createValueCodec(): ValueCodec {
  return composeValueCodec({ captureCodecIntrinsics, createBase64, createEncoder, createDecoder });
}

/**
 * The codec composed in another realm from its pieces' source text, as the prelude composes it:
 * `load` evaluates a function's text there. For tests of the sandbox's parts.
 */
export function loadValueCodec(load: <Part>(part: Part) => Part): ValueCodec {
  const parts: ValueCodecParts = {
    captureCodecIntrinsics: load(captureCodecIntrinsics),
    createBase64: load(createBase64),
    createEncoder: load(createEncoder),
    createDecoder: load(createDecoder),
  };
  return load(composeValueCodec)(parts);
}

/** The codec instance for the host realm. */
export const valueCodec: ValueCodec = createValueCodec();

/** True when `error` came from the codec (in either realm). */
export function isValueCodecError(error: unknown): error is ValueCodecErrorShape {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "ValueCodecError";
}
