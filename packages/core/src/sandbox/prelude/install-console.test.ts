import { describe, expect, it } from "vitest";
import { createFormatter, installConsole } from "./install-console.js";
import { partRealm } from "./part-realm-fixtures.js";

/** A fresh realm with `console` installed from its source text; `lines` is what the host was sent. */
function consoleInFreshRealm() {
  const { global, load, intrinsics, codec, read } = partRealm();
  const formatter = load(createFormatter)(intrinsics, codec, {
    maxMessageChars: 10_000,
    maxReadChars: 16 * 1024 * 1024,
  });
  const lines: Array<[string, string]> = [];
  load(installConsole)(intrinsics, global, formatter.formatValue, (level, text) => lines.push([level, text]), {
    maxLogLines: 1_000,
    maxLogLineChars: 10_000,
    maxLogChars: 1_000_000,
    maxReadChars: 16 * 1024 * 1024,
  });
  return { formatter, lines, read };
}

describe("installConsole", () => {
  it("each console call is one line: strings as they are, data as wire text, the level kept", () => {
    const { lines, read } = consoleInFreshRealm();
    read(
      "console.log('count', 3, { tags: ['a'], big: 2n }, undefined, null, Symbol('s'), function named() {}, () => 1, new Uint8Array([1]))",
    );
    read("console.warn('careful'); console.error('broken'); console.info('fyi'); console.debug('detail')");
    expect(lines).toEqual([
      [
        "log",
        'count 3 {"tags":["a"],"big":{"$cm":"bigint","v":"2"}} undefined null Symbol(s) [Function named] [Function anonymous] {"$cm":"bytes","v":"AQ=="}',
      ],
      ["warn", "careful"],
      ["error", "broken"],
      ["info", "fyi"],
      ["debug", "detail"],
    ]);
  });

  it("hostile values never make a console call throw", () => {
    const { lines, read } = consoleInFreshRealm();
    read("const cyclic = {}; cyclic.self = cyclic; console.log(cyclic)");
    read("console.log(new Proxy({}, { get() { throw new Error('trap') }, ownKeys() { throw new Error('trap') } }))");
    read("console.log({ toString() { throw new Error('no') }, get x() { throw new Error('getter') } })");
    expect(lines).toHaveLength(3);
    expect(lines[0]![1]).toBe("[object Object]");
  });

  it("console is frozen and not enumerable", () => {
    const { read } = consoleInFreshRealm();
    expect(
      read("[Object.isFrozen(console), Object.keys(globalThis).includes('console'), Object.keys(console)]"),
    ).toEqual([true, false, ["log", "info", "debug", "warn", "error"]]);
  });
});

describe("createFormatter", () => {
  it("describes thrown values as the host records them, and never throws itself", () => {
    const { formatter, read } = consoleInFreshRealm();
    expect(formatter.describeThrown(read("new TypeError('bad input')"))).toBe("TypeError: bad input");
    expect(formatter.describeThrown(read("({ code: 7 })"))).toBe('Uncaught {"code":7}');
    expect(formatter.describeThrown("plain")).toBe("Uncaught plain");
    const hostile = read(
      "const error = new Error('x'); Object.defineProperty(error, 'message', { get() { throw 1 } }); error",
    );
    expect(formatter.describeThrown(hostile)).toBe("Uncaught exception (it could not be described)");
    expect(formatter.messageOf(hostile, "fallback")).toBe("fallback");
    expect(formatter.messageOf(read("new RangeError('far')"), "fallback")).toBe("far");
    expect(formatter.messageOf("not an error", "fallback")).toBe("fallback");
  });
});
