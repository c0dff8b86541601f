/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): programs that follow `constructor` chains from
 * what crosses the bridge, and from the globals the prelude installs, to reach the host.
 */
import { describe, expect, it } from "vitest";
import { encode, expectReturned, recordedCall } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

/**
 * Installed before the program: follows `value.constructor.constructor` to a Function and asks it
 * for the host. Contained means it found the sandbox's own Function and global and nothing else.
 */
const PROBE = `
function probe(value) {
  const ctor = value === null || value === undefined ? undefined : value.constructor;
  if (ctor === undefined) return { constructor: "none", nullPrototype: Object.getPrototypeOf(value) === null };
  const F = ctor.constructor;
  let escape;
  try { escape = typeof F("return process")(); } catch (error) { escape = error.name; }
  return {
    sameFunction: F === Function,
    sameGlobal: F("return this")() === globalThis,
    process: F("return typeof process")(),
    require: F("return typeof require")(),
    buffer: F("return typeof Buffer")(),
    escape,
  };
}
`;
const CONTAINED = {
  sameFunction: true,
  sameGlobal: true,
  process: "undefined",
  require: "undefined",
  buffer: "undefined",
  escape: "ReferenceError",
};
const NO_CONSTRUCTOR = { constructor: "none", nullPrototype: true };

describe("constructor chains on every value that crosses the bridge (R-SB-4)", () => {
  it("R-SB-4: constructor chain on a connector result cannot reach process", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { const r = await github.get({ list: [{ a: 1 }] }); return [probe(r), probe(r.args), probe(r.args.list), probe(r.args.list[0]), probe(r.seq)]; }`,
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: constructor chains on bigint and Uint8Array results stay in the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { const r = await github.get({}); return [probe(r.big), probe(r.bytes), probe(r.bytes.buffer), r.bytes instanceof Uint8Array]; }`,
      {
        answer: () => ({ kind: "value", value: encode({ big: 10n, bytes: new Uint8Array([1, 2]) }) }),
      },
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, true]);
  });

  it("R-SB-4: constructor chain on an error from a rejected call cannot reach process", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { try { await github.get({}); } catch (error) { return [probe(error), error instanceof Error, Object.getPrototypeOf(error) === Error.prototype, Object.keys(error)]; } }`,
      {
        answer: () => ({ kind: "error", message: "denied" }),
      },
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, true, true, []]);
  });

  it("R-SB-4: an error the host's onRequest throws crosses as its message only", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { try { await github.get({}); } catch (error) { return { probe: probe(error), message: error.message, keys: Object.getOwnPropertyNames(error).sort(), hostFrames: /isolated-vm|node:|\\/work\\//.test(error.stack) }; } }`,
      {
        answer: () => {
          const error = new Error("host failure") as Error & { secret?: unknown };
          error.secret = { token: "do-not-leak" };
          throw error;
        },
      },
    );
    expect(expectReturned(outcome)).toEqual({
      probe: CONTAINED,
      message: "host failure",
      keys: ["message", "stack"],
      hostFrames: false,
    });
  });

  it("R-SB-4: constructor chain on a codemode.step result cannot reach process", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { const v = await codemode.step('s', () => ({ nested: [1] })); return [probe(v), probe(v.nested), probe(codemode.step('t', async () => 1))]; }`,
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: values replayed from the log lead only to the sandbox", async () => {
    const replay = [
      recordedCall(0, {}, { text: encode({ replayed: [1n] }) }),
      recordedCall(1, {}, { outcome: "error", text: "replayed error" }),
    ];
    const outcome = await run(
      `${PROBE}\nasync () => { const v = await github.get({}); let e; try { await github.get({}); } catch (error) { e = error; } return [probe(v), probe(v.replayed[0]), probe(e)]; }`,
      { replay },
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED]);
    expect(outcome.requests).toEqual([]);
  });
});

describe("constructor chains on the globals the prelude installs (R-SB-4)", () => {
  it("R-SB-4: the connector global object has no constructor, and its methods lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(github), probe(github.get), probe(github.get.call), probe(github.get({}))]`,
    );
    expect(expectReturned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: codemode and codemode.step (an async function) lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(codemode), probe(codemode.step), codemode.step.constructor.name]`,
    );
    expect(expectReturned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, "AsyncFunction"]);
  });

  it("R-SB-4: console and console.log lead only to the sandbox", async () => {
    const outcome = await run(`${PROBE}\nasync () => [probe(console), probe(console.log), probe(console.error)]`);
    expect(expectReturned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: crypto and its functions lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(crypto), probe(crypto.randomUUID), probe(crypto.getRandomValues), probe(crypto.randomUUID()), probe(crypto.getRandomValues(new Uint8Array(2)))]`,
    );
    expect(expectReturned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: the replay-stable Date, its instances and Date.now lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(Date), probe(new Date()), probe(Date.now), probe(Date.prototype), probe(Math.random)]`,
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: timer functions and timer ids lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(setTimeout), probe(setTimeout(() => {}, 0)), probe(clearTimeout), probe(queueMicrotask), probe(setInterval)]`,
    );
    expect(expectReturned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: bridge functions are strict: caller and arguments cannot be read to climb into the prelude", async () => {
    const outcome = await run(`async () => {
      const names = [];
      for (const fn of [github.get, codemode.step, console.log, crypto.randomUUID, setTimeout, Date, Date.now, Math.random]) {
        for (const key of ['caller', 'arguments']) {
          try { const value = fn[key]; names.push(value === undefined || value === null ? 'empty' : 'LEAK'); } catch (error) { names.push(error.name); }
        }
      }
      return [...new Set(names)];
    }`);
    expect((expectReturned(outcome) as string[]).filter((name) => name === "LEAK")).toEqual([]);
  });

  it("R-SB-4: Error.prepareStackTrace frames expose no function or receiver of the prelude", async () => {
    const outcome = await run(`async () => {
      const seen = [];
      Error.prepareStackTrace = (error, frames) => frames.map((frame) => ({ file: frame.getFileName(), fn: typeof frame.getFunction(), self: typeof frame.getThis() }));
      const capture = () => seen.push(...new Error('probe').stack);
      await github.get({ get trap() { capture(); return 1; } });
      console.log({ toString() { capture(); return 'x'; }, get field() { capture(); return 1; } });
      await codemode.step('s', () => { capture(); return 1; });
      return seen.filter((frame) => frame.file !== 'codemode.js');
    }`);
    const frames = expectReturned(outcome) as Array<{ file: string | null; fn: string; self: string }>;
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame).toMatchObject({ fn: "undefined", self: "undefined" });
  });
});
