import type { ValueCodec } from "./value-codec.js";

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Installs `crypto` (`getRandomValues`, `randomUUID`) and, with `deterministic`,
 * a replay-stable `Math.random` (R-SB-6): cyrb128 of the seed gives four 32-bit words seeding
 * sfc32 — small, fast, good enough for non-crypto use. Every pass, in any process, draws the same
 * numbers. `crypto` draws the host's `randomBytes` 1 KiB at a time (so most draws cost no bridge
 * call): real bytes without `deterministic`, the keyed stream of the execution's secret seed
 * with `keyed` (the sandbox then holds only a seed derived for `Math.random`). An execution
 * started before secret seeds (its seed is its id, not `keyed`) keeps drawing both from the one
 * sfc32 stream, so that it replays.
 */
export function installRandom(
  global: Record<string, unknown>,
  deterministic: { seed: string; keyed?: boolean } | null,
  codec: ValueCodec,
  randomBytes: (count: number) => string,
): void {
  "use strict";
  // Its own built-ins rather than sandbox-intrinsics.ts's: test/hardening-determinism.test.ts runs
  // this source alone, with these four arguments, to draw what executions before issue 17.10 drew.
  const ReflectApply = Reflect.apply;
  const ObjectFreeze = Object.freeze;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const TypeErrorCtor = TypeError;
  const Uint8ArrayCtor = Uint8Array;
  const typedArrayTagGetter = Object.getOwnPropertyDescriptor(
    Object.getPrototypeOf(Uint8Array.prototype),
    Symbol.toStringTag,
  )!.get!;

  let nextRandomUint32!: () => number;
  if (deterministic) {
    const seedText = deterministic.seed;
    let h1 = 1779033703,
      h2 = 3144134277,
      h3 = 1013904242,
      h4 = 2773480762;
    for (let index = 0; index < seedText.length; index++) {
      const k = seedText.charCodeAt(index);
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
    }
    h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
    h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
    h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
    h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
    let a = (h1 ^ h2 ^ h3 ^ h4) >>> 0,
      b = (h2 ^ h1) >>> 0,
      c = (h3 ^ h1) >>> 0,
      d = (h4 ^ h1) >>> 0;
    nextRandomUint32 = () => {
      a |= 0;
      b |= 0;
      c |= 0;
      d |= 0;
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return t >>> 0;
    };
    for (let index = 0; index < 15; index++) nextRandomUint32();
    const mathRandom = nextRandomUint32;
    ObjectDefineProperty(Math, "random", {
      value: function random() {
        return mathRandom() / 4294967296;
      },
      writable: true,
      configurable: true,
    });
  }
  if (!deterministic || deterministic.keyed) {
    // The host's bytes: real ones, or the keyed stream of a secret seed the sandbox never sees.
    let pool: Uint8Array = new Uint8ArrayCtor(0);
    let poolIndex = 0;
    nextRandomUint32 = () => {
      if (poolIndex + 4 > pool.length) {
        pool = codec.decode(`{"$cm":"bytes","v":"${randomBytes(1024)}"}`) as Uint8Array;
        poolIndex = 0;
      }
      const value =
        ((pool[poolIndex]! << 24) |
          (pool[poolIndex + 1]! << 16) |
          (pool[poolIndex + 2]! << 8) |
          pool[poolIndex + 3]!) >>>
        0;
      poolIndex += 4;
      return value;
    };
  }

  const crypto: Record<string, unknown> = ObjectCreate(null);
  crypto.getRandomValues = function getRandomValues<T>(array: T): T {
    const tag = ReflectApply(typedArrayTagGetter, array, []) as string | undefined;
    if (tag === undefined || tag === "Float32Array" || tag === "Float64Array" || tag === "Float16Array") {
      throw new TypeErrorCtor("crypto.getRandomValues needs an integer typed array");
    }
    const view = array as unknown as { buffer: ArrayBuffer; byteOffset: number; byteLength: number };
    if (view.byteLength > 65536) throw new RangeError("crypto.getRandomValues: at most 65536 bytes at a time");
    const bytes = new Uint8ArrayCtor(view.buffer, view.byteOffset, view.byteLength);
    for (let index = 0; index < bytes.length; index += 4) {
      const word = nextRandomUint32();
      for (let offset = 0; offset < 4 && index + offset < bytes.length; offset++)
        bytes[index + offset] = (word >>> (offset * 8)) & 255;
    }
    return array;
  };
  crypto.randomUUID = function randomUUID(): string {
    const bytes = new Uint8ArrayCtor(16);
    (crypto.getRandomValues as (array: Uint8Array) => Uint8Array)(bytes);
    bytes[6] = (bytes[6]! & 0x0f) | 0x40;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    let hex = "";
    for (let index = 0; index < 16; index++) {
      hex += (bytes[index]! < 16 ? "0" : "") + bytes[index]!.toString(16);
      if (index === 3 || index === 5 || index === 7 || index === 9) hex += "-";
    }
    return hex;
  };
  ObjectDefineProperty(global, "crypto", {
    value: ObjectFreeze(crypto),
    enumerable: false,
    configurable: true,
    writable: true,
  });
}
