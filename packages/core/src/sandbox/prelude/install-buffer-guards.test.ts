import { describe, expect, it } from "vitest";
import { installBufferGuards } from "./install-buffer-guards.js";
import { partRealm } from "./part-realm-fixtures.js";

/** A fresh realm with the buffer guards installed from their source text, as prelude.ts injects them. */
function guardedRealm(): (expression: string) => unknown {
  const { global, load, intrinsics, read } = partRealm();
  load(installBufferGuards)(intrinsics, global);
  return read;
}

const attempt = (expression: string) =>
  `(() => { try { return ${expression}; } catch (error) { return error.name + ': ' + error.message; } })()`;

describe("installBufferGuards (issue 17.2)", () => {
  it("refuses resizable ArrayBuffers and growable SharedArrayBuffers, whose memory the heap limit does not count", () => {
    const read = guardedRealm();
    expect(read(attempt("new ArrayBuffer(8, { maxByteLength: 2 ** 30 })"))).toMatch(
      /^RangeError: ArrayBuffer with maxByteLength is not available/,
    );
    expect(read(attempt("new SharedArrayBuffer(8, { maxByteLength: 2 ** 30 })"))).toMatch(
      /^RangeError: SharedArrayBuffer with maxByteLength is not available/,
    );
    expect(read("[new ArrayBuffer(8).resizable, new SharedArrayBuffer(8).growable]")).toEqual([false, false]);
  });

  it("fixed-length buffers work as before: byteLength, instanceof, constructor, species, subclasses, options without maxByteLength", () => {
    const read = guardedRealm();
    expect(
      read(`[
        new ArrayBuffer(8).byteLength,
        new ArrayBuffer(8, {}).byteLength,
        new ArrayBuffer(8, { maxByteLength: undefined }).byteLength,
        new Uint8Array(4).buffer instanceof ArrayBuffer,
        new Uint8Array(4).buffer.constructor === ArrayBuffer,
        new ArrayBuffer(8).slice(2).byteLength,
        new (class Sub extends ArrayBuffer {})(3) instanceof ArrayBuffer,
        ArrayBuffer.isView(new Uint8Array(1)),
        ArrayBuffer.name,
        ArrayBuffer.length,
        new SharedArrayBuffer(4).byteLength,
      ]`),
    ).toEqual([8, 8, 8, true, true, 6, true, true, "ArrayBuffer", 1, 4]);
    expect(read(attempt("ArrayBuffer(8)"))).toBe("TypeError: Constructor ArrayBuffer requires 'new'");
  });

  it("converts the length before the original constructor runs, once", () => {
    const read = guardedRealm();
    expect(read("let reads = 0; [new ArrayBuffer({ valueOf() { reads++; return 5; } }).byteLength, reads]")).toEqual([
      5, 1,
    ]);
  });
});
