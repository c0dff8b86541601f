import { createContext, runInContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_LIMITS, MAX_INTL_OBJECTS, MAX_READ_CHARS } from "../sandbox-limits.js";
import { PRELUDE_SOURCE } from "./prelude.js";

/** The prelude evaluated in a fresh realm, its setup called as the executor calls it. */
function setUpFreshRealm(config: Record<string, unknown>) {
  const context = createContext();
  const setup = runInContext(PRELUDE_SOURCE, context) as (
    ...args: unknown[]
  ) => (id: number, kind: number, text: string) => void;
  const submitted: Array<{ id: number; request: Record<string, unknown> }> = [];
  const logs: string[] = [];
  const finished: string[] = [];
  const deliver = setup(
    (id: number, text: string, args?: string) =>
      submitted.push({ id, request: { ...JSON.parse(text), ...(args === undefined ? {} : { args }) } }),
    (level: string, text: string) => logs.push(`${level}: ${text}`),
    () => Buffer.alloc(1024, 1).toString("base64"),
    (text: string) => finished.push(text),
    JSON.stringify({
      connectors: {},
      services: [],
      replay: [],
      deterministic: null,
      allowNetwork: false,
      limits: { ...DEFAULT_SANDBOX_LIMITS, maxReadChars: MAX_READ_CHARS, maxIntlObjects: MAX_INTL_OBJECTS },
      ...config,
    }),
  );
  return {
    deliver,
    submitted,
    logs,
    finished,
    read: (expression: string): unknown => runInContext(expression, context),
  };
}

describe("the prelude", () => {
  it("is self-contained: its parts, evaluated from source text in a fresh realm, install every global", () => {
    const { read } = setUpFreshRealm({
      connectors: { github: ["get"] },
      services: ["search"],
      deterministic: { seed: "s", clockMs: 5 },
      allowNetwork: true,
    });
    expect(
      read(
        "['github', 'codemode', 'fetch', 'console', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask', 'crypto', '__codemode_start'].filter((name) => !(name in globalThis))",
      ),
    ).toEqual([]);
    expect(read("[Date.now(), typeof WebAssembly, Object.keys(codemode)]")).toEqual([
      5,
      "undefined",
      ["step", "search"],
    ]);
  });

  it("R-SB-1: nothing of the prelude's parts or the host callbacks is left on a global", () => {
    const { read } = setUpFreshRealm({});
    const leaked = read(
      "Object.getOwnPropertyNames(globalThis).filter((name) => /parts|setup|install|create|bridge|submit|deliver|codec|sandbox/i.test(name))",
    );
    expect(leaked).toEqual([]);
  });

  it("a program run through it talks to the host only in text, and hears back through deliver", async () => {
    const { deliver, submitted, logs, finished, read } = setUpFreshRealm({ connectors: { math: ["add"] } });
    read("__codemode_start(async () => { console.log('adding'); return (await math.add({ a: 1, b: 2 })).sum; })");
    expect(submitted).toEqual([
      { id: 1, request: { type: "call", seq: 0, connector: "math", method: "add", args: '{"a":1,"b":2}' } },
    ]);
    deliver(1, 0, '{"sum":3}');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(finished).toEqual(["R3"]);
    expect(logs).toEqual(["log: adding"]);
  });

  it("without deterministic, randomness comes from the host's bytes and the clock is real", () => {
    const { read } = setUpFreshRealm({});
    expect(read("crypto.getRandomValues(new Uint8Array(4)).join()")).toBe("1,1,1,1");
    expect(Math.abs((read("Date.now()") as number) - Date.now())).toBeLessThan(5_000);
  });
});
