import { describe, expect, it } from "vitest";
import { createValueCodec, isValueCodecError, valueCodec } from "./value-codec.js";

function roundTrip(value: unknown): unknown {
  const text = valueCodec.encode(value);
  expect(typeof text).toBe("string");
  return valueCodec.decode(text!);
}

/** The codec error `action` (the codec's `what`) throws; fails the test when it throws nothing. */
function codecError(what: "encode" | "decode", action: () => unknown): Error & { code?: unknown } {
  try {
    action();
  } catch (error) {
    expect(isValueCodecError(error)).toBe(true);
    return error as Error & { code?: unknown };
  }
  throw new Error(`expected ${what} to throw`);
}

const encodeError = (value: unknown) => codecError("encode", () => valueCodec.encode(value));
const decodeError = (text: string) => codecError("decode", () => valueCodec.decode(text));

describe("value codec round trips (R-SB-4)", () => {
  it("keeps plain JSON data as plain JSON text", () => {
    const value = {
      name: "web",
      open: true,
      count: 3,
      ratio: 0.5,
      tags: ["a", "b"],
      owner: null,
      nested: { deep: [{ x: 1 }] },
    };
    expect(valueCodec.encode(value)).toBe(JSON.stringify(value));
    expect(roundTrip(value)).toEqual(value);
  });

  it("round trips primitives at the top level", () => {
    for (const value of ["text", "", 0, -1.5, true, false, null]) expect(roundTrip(value)).toEqual(value);
  });

  it("encodes undefined at the top level as no text, and drops undefined properties", () => {
    expect(valueCodec.encode(undefined)).toBeUndefined();
    expect(valueCodec.encode({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(valueCodec.encode([undefined, 1])).toBe("[null,1]");
  });

  it("turns NaN and the infinities into null, as JSON does", () => {
    expect(valueCodec.encode([Number.NaN, Infinity, -Infinity])).toBe("[null,null,null]");
  });

  it("round trips bigint, including negative and beyond 2^64", () => {
    const value = { small: 1n, negative: -42n, huge: 2n ** 100n + 7n };
    expect(valueCodec.encode(1n)).toBe('{"$cm":"bigint","v":"1"}');
    expect(roundTrip(value)).toEqual(value);
  });

  it("round trips Uint8Array of every padding length", () => {
    for (let length = 0; length <= 7; length++) {
      const bytes = Uint8Array.from({ length }, (_, index) => (index * 97 + 250) & 255);
      const decoded = roundTrip(bytes);
      expect(decoded).toBeInstanceOf(Uint8Array);
      expect([...(decoded as Uint8Array)]).toEqual([...bytes]);
      expect(valueCodec.encode(bytes)).toBe(`{"$cm":"bytes","v":"${Buffer.from(bytes).toString("base64")}"}`);
    }
  });

  it("encodes only the viewed part of a Uint8Array over a larger buffer", () => {
    const buffer = new Uint8Array([9, 1, 2, 3, 9]).buffer;
    expect(roundTrip(new Uint8Array(buffer, 1, 3))).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("encodes the real bytes of a Uint8Array whose own length property lies", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    Object.defineProperty(bytes, "length", { value: 1 });
    expect(roundTrip(bytes)).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("preserves key order of objects", () => {
    const text = valueCodec.encode({ zebra: 1, apple: { y: 2, b: 3 }, mango: 4 });
    expect(text).toBe('{"zebra":1,"apple":{"y":2,"b":3},"mango":4}');
    expect(Object.keys(valueCodec.decode(text!) as object)).toEqual(["zebra", "apple", "mango"]);
  });

  it("sorts keys only when asked", () => {
    expect(valueCodec.encode({ b: 1, a: { d: 1, c: 2 } }, { sortKeys: true })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });

  it("encodes a Date as its ISO text and an invalid Date as null", () => {
    expect(valueCodec.encode({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
    expect(valueCodec.encode(new Date(Number.NaN))).toBe("null");
  });

  it("encodes an Error as its name and message only", () => {
    const error = new TypeError("bad input");
    expect(valueCodec.decode(valueCodec.encode(error)!)).toEqual({ name: "TypeError", message: "bad input" });
  });

  it("ignores symbol keys and non-enumerable properties", () => {
    const value: Record<string | symbol, unknown> = { a: 1, [Symbol("hidden")]: 2 };
    Object.defineProperty(value, "secret", { value: 3, enumerable: false });
    expect(valueCodec.encode(value)).toBe('{"a":1}');
  });

  it("two codec instances agree on the wire form", () => {
    const other = createValueCodec();
    const value = { a: [1n, new Uint8Array([1]), { $cm: "x" }] };
    expect(other.encode(value)).toBe(valueCodec.encode(value));
  });
});

describe("tag escaping of user data with a $cm key", () => {
  it("wraps an object that has its own $cm key so it never decodes as a tag", () => {
    const value = { $cm: "bigint", v: "12" };
    const text = valueCodec.encode(value)!;
    expect(text).toBe('{"$cm":"object","v":{"$cm":"bigint","v":"12"}}');
    expect(valueCodec.decode(text)).toEqual(value);
    expect(typeof (valueCodec.decode(text) as { v: unknown }).v).toBe("string");
  });

  it("decodes a tag whose key is written with \\u escapes exactly like a literal one (plain text skips the revive walk)", () => {
    expect(valueCodec.decode('{"\\u0024cm":"bigint","v":"5"}')).toBe(5n);
    expect(valueCodec.decode('{"a":{"$\\u0063m":"bytes","v":"AQI="}}')).toEqual({ a: new Uint8Array([1, 2]) });
    expect(() => valueCodec.decode('{"\\u0024cm":"nonsense","v":1}')).toThrow(/unknown tagged value/);
    // Text without the tag key is returned as JSON.parse gives it.
    expect(valueCodec.decode('{"x":[1,{"y":"$cm"}]}')).toEqual({ x: [1, { y: "$cm" }] });
  });

  it("escapes nested look-alike tags and keeps real tags inside them", () => {
    const value = { outer: { $cm: "bytes", v: "AQID", inner: { $cm: "object", v: 5n } }, list: [{ $cm: 1 }] };
    expect(roundTrip(value)).toEqual(value);
  });
});

describe("canonical text for replay comparison (R-RP-2)", () => {
  it("ignores key order at every depth", () => {
    const one = valueCodec.encode({ repo: "acme/web", filter: { state: "open", labels: ["bug"] }, n: 1n })!;
    const two = valueCodec.encode({ n: 1n, filter: { labels: ["bug"], state: "open" }, repo: "acme/web" })!;
    expect(one).not.toBe(two);
    expect(valueCodec.canonical(one)).toBe(valueCodec.canonical(two));
  });

  it("still tells different values apart, including array order and tagged types", () => {
    const canonical = (value: unknown) => valueCodec.canonical(valueCodec.encode(value)!);
    expect(canonical({ a: [1, 2] })).not.toBe(canonical({ a: [2, 1] }));
    expect(canonical({ a: 1 })).not.toBe(canonical({ a: "1" }));
    expect(canonical({ a: 1n })).not.toBe(canonical({ a: "1" }));
    expect(canonical({ a: 1n })).not.toBe(canonical({ a: { $cm: "bigint", v: "1" } }));
    expect(canonical(new Uint8Array([1]))).not.toBe(canonical(new Uint8Array([2])));
  });

  it("is stable: canonical text is its own canonical text", () => {
    const text = valueCodec.canonical(valueCodec.encode({ b: { $cm: "x", z: 1, a: 2 }, a: new Uint8Array([5]) })!);
    expect(valueCodec.canonical(text)).toBe(text);
  });
});

describe("errors name the path of what cannot be encoded (R-DV-1)", () => {
  it("names a function deep inside", () => {
    const error = encodeError({ issue: { labels: ["bug", () => 1] } });
    expect(error.message).toContain("a function at issue.labels[1]");
    expect(error.code).toBe("NOT_SERIALIZABLE");
    expect(error.name).toBe("ValueCodecError");
  });

  it("names the top level", () => {
    expect(encodeError(Symbol("s")).message).toContain("a symbol at the top level");
  });

  it("refuses a circular reference", () => {
    const value: Record<string, unknown> = { a: { b: {} } };
    (value.a as Record<string, Record<string, unknown>>).b!.back = value;
    expect(encodeError(value).message).toContain("a circular reference at a.b.back");
  });

  it("accepts the same object twice when it is not a cycle", () => {
    const shared = { x: 1 };
    expect(valueCodec.encode({ one: shared, two: shared })).toBe('{"one":{"x":1},"two":{"x":1}}');
  });

  it("refuses nesting deeper than the limit instead of overflowing the stack", () => {
    let deep: unknown[] = [];
    for (let depth = 0; depth < 100_000; depth++) deep = [deep];
    expect(encodeError(deep).message).toContain("nested more than 512 levels deep");
  });

  it("refuses Map, Set, Promise, ArrayBuffer and other typed arrays with a hint", () => {
    expect(encodeError({ m: new Map() }).message).toContain("a Map (convert it with Object.fromEntries) at m ");
    expect(encodeError({ s: new Set() }).message).toContain("a Set (convert it with Array.from) at s ");
    expect(encodeError({ p: Promise.resolve(1) }).message).toContain("a Promise (await it first) at p ");
    expect(encodeError({ b: new ArrayBuffer(2) }).message).toContain("an ArrayBuffer (wrap it in a Uint8Array) at b ");
    expect(encodeError({ t: new Int16Array(2) }).message).toContain("a Int16Array (use Uint8Array for bytes) at t ");
  });

  it("lets a throwing getter's error through so the caller can report it", () => {
    expect(() =>
      valueCodec.encode({
        get broken() {
          throw new Error("getter said no");
        },
      }),
    ).toThrow("getter said no");
  });
});

describe("malformed wire text throws a ValueCodecError", () => {
  it("refuses text that is not JSON", () => {
    const error = decodeError("{not json");
    expect(error.message).toContain("malformed wire text");
    expect(error.code).toBe("NOT_SERIALIZABLE");
  });

  it("refuses empty text and non-text input", () => {
    decodeError("");
    decodeError(42 as unknown as string);
  });

  it("refuses an unknown tag", () => {
    expect(decodeError('{"$cm":"date","v":"x"}').message).toContain("an unknown tagged value (date)");
  });

  it("refuses a tag whose payload has the wrong type", () => {
    decodeError('{"$cm":"bigint","v":12}');
    decodeError('{"$cm":"object","v":[1]}');
  });

  it("refuses a malformed bigint", () => {
    expect(decodeError('{"$cm":"bigint","v":"12abc"}').message).toContain("a malformed bigint");
  });

  it("refuses malformed base64", () => {
    decodeError('{"$cm":"bytes","v":"abc"}');
    decodeError('{"$cm":"bytes","v":"ab!="}');
  });

  it("canonical refuses malformed text too", () => {
    expect(() => valueCodec.canonical("[1,")).toThrow(/malformed wire text/);
  });

  it("decodes a __proto__ key as an own property, never as a prototype", () => {
    const decoded = valueCodec.decode('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect((decoded as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(decoded)).toEqual(["__proto__", "a"]);
    expect(Object.getOwnPropertyDescriptor(decoded, "__proto__")?.value).toEqual({ polluted: true });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
