/** What `captureCodecIntrinsics` captured; the other pieces of the codec take their built-ins only from here. */
export type CodecIntrinsics = ReturnType<typeof captureCodecIntrinsics>;

/**
 * Captures the built-ins the codec uses, so that later changes to globals or prototypes do not
 * reach it, and defines the helpers every piece shares (`fail`, `hasBrand`). Like every piece of
 * the codec it references nothing outside itself: its source text also runs in the sandbox,
 * before any model code (see value-codec.ts).
 */
export function captureCodecIntrinsics() {
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const ReflectApply = Reflect.apply;
  const ErrorCtor = Error;
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const B64_INDEX: Record<string, number> = ObjectCreate(null);
  for (let index = 0; index < 64; index++) B64_INDEX[B64.charAt(index)] = index;

  function fail(path: string, what: string): never {
    const error = new ErrorCtor(
      `${what} at ${path || "the top level"} cannot be stored or passed: use plain JSON data (objects, arrays, strings, numbers, booleans, null), Uint8Array or bigint`,
    );
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

  // The pieces' objects have a null prototype: read once, at install time, and cheaper to create
  // in a fresh isolate than a literal that needs its own hidden class (20 µs for this one).
  return {
    __proto__: null,
    TAG: "$cm",
    MAX_DEPTH: 512,
    JSONStringify: JSON.stringify,
    JSONParse: JSON.parse,
    ObjectKeys: Object.keys,
    ObjectGetPrototypeOf,
    ObjectPrototype: Object.prototype,
    ObjectDefineProperty,
    ArrayIsArray: Array.isArray,
    NumberIsFinite: Number.isFinite,
    ReflectApply,
    ArraySort: Array.prototype.sort,
    StringIndexOf: String.prototype.indexOf,
    ErrorCtor,
    BigIntCtor: BigInt,
    Uint8ArrayCtor: Uint8Array,
    typedArrayTagGetter: Object.getOwnPropertyDescriptor(
      ObjectGetPrototypeOf(Uint8Array.prototype),
      Symbol.toStringTag,
    )!.get!,
    // The intrinsic length: an own "length" property on the array must not change what is encoded.
    typedArrayLengthGetter: Object.getOwnPropertyDescriptor(ObjectGetPrototypeOf(Uint8Array.prototype), "length")!.get!,
    DateGetTime: Date.prototype.getTime,
    DateToISOString: Date.prototype.toISOString,
    MapSizeGetter: Object.getOwnPropertyDescriptor(Map.prototype, "size")!.get!,
    SetSizeGetter: Object.getOwnPropertyDescriptor(Set.prototype, "size")!.get!,
    PromiseThen: Promise.prototype.then,
    ArrayBufferByteLength: Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")!.get!,
    ErrorIsError: (ErrorCtor as unknown as { isError?: (value: unknown) => boolean }).isError as
      | ((value: unknown) => boolean)
      | undefined,
    B64,
    B64_INDEX,
    fail,
    hasBrand,
  };
}
