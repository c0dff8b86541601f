import { describe, expect, it } from "vitest";
import type { ReplayEntry } from "../executor.js";
import { wireReplay } from "../sandbox-config.js";
import { installCodemode, installFetch } from "./install-codemode.js";
import { installConnectors, type SandboxReplayEntry } from "./install-connectors.js";
import { createFormatter } from "./install-console.js";
import { partRealm } from "./part-realm-fixtures.js";
import { createSandboxBridge } from "./sandbox-bridge.js";

type Request = Record<string, unknown> & { id: number };

/**
 * A fresh realm with connectors, `codemode` and `fetch` installed from their source text over the
 * real sandbox bridge. The host answers each request with `answer(request)` (wire text).
 */
function codemodeWith(
  options: { replay?: SandboxReplayEntry[]; services?: string[]; answer?: (request: Request) => string } = {},
) {
  const { global, load, intrinsics, codec, read } = partRealm();
  const formatter = load(createFormatter)(intrinsics, codec, {
    maxMessageChars: 10_000,
    maxReadChars: 16 * 1024 * 1024,
  });
  const submitted: Request[] = [];
  const answer = options.answer ?? (() => "");
  const bridge = load(createSandboxBridge)(
    intrinsics,
    codec,
    (id, text, args) => {
      const request = { id, ...JSON.parse(text), ...(args === undefined ? {} : { args }) } as Request;
      submitted.push(request);
      queueMicrotask(() => bridge.deliver(id, 0, answer(request)));
    },
    formatter.messageOf,
    1_000_000,
  );
  const seqs = load(installConnectors)(
    intrinsics,
    global,
    { github: ["get"] },
    wireReplay((options.replay ?? []) as ReplayEntry[]),
    codec,
    bridge,
  );
  const service = load(installCodemode)(
    intrinsics,
    global,
    options.services ?? ["search", "describe"],
    codec,
    bridge,
    seqs,
    formatter.describeThrown,
  );
  load(installFetch)(intrinsics, global, service, seqs, bridge.plain);
  return {
    submitted,
    seqs,
    run: (program: string) => read(`(async () => { ${program} })()`) as Promise<unknown>,
  };
}

describe("codemode.step", () => {
  it("a new step runs fn here and records its value with the seq after the calls fn made", async () => {
    const { run, submitted } = codemodeWith();
    const value = await run(
      "return codemode.step('load', async () => { await github.get({ id: 1 }); return { total: 2n }; })",
    );
    expect(value).toEqual({ total: 2n });
    expect(submitted.map(({ id: _id, ...request }) => request)).toEqual([
      { type: "call", seq: 1, connector: "github", method: "get", args: '{"id":1}' },
      { type: "step", seq: 0, name: "load", seqAfter: 2, value: '{"total":{"$cm":"bigint","v":"2"}}' },
    ]);
  });

  it("the first pass sees what replays will see: the recorded form of the value", async () => {
    const { run } = codemodeWith();
    expect(
      await run("const at = await codemode.step('now', () => ({ when: undefined, list: [undefined] })); return at"),
    ).toEqual({ list: [null] });
  });

  it("a recorded step is not run again: its value replays and later calls keep their seqs", async () => {
    const replay: SandboxReplayEntry[] = [
      { kind: "step", seq: 0, name: "load", seqAfter: 3, outcome: "value", text: '{"v":1}' },
    ];
    const { run, submitted } = codemodeWith({ replay });
    const value = await run(
      "let ran = false; const v = await codemode.step('load', () => { ran = true; }); await github.get({}); return [v, ran]",
    );
    expect(value).toEqual([{ v: 1 }, false]);
    expect(submitted).toMatchObject([{ type: "call", seq: 3 }]);
  });

  it("a step whose fn throws records the message and throws it again; a recorded error replays", async () => {
    const first = codemodeWith();
    await expect(first.run("return codemode.step('load', () => { throw new RangeError('too far') })")).rejects.toThrow(
      "RangeError: too far",
    );
    expect(first.submitted).toMatchObject([{ type: "step", seq: 0, seqAfter: 1, error: "RangeError: too far" }]);
    const replayed = codemodeWith({
      replay: [{ kind: "step", seq: 0, name: "load", seqAfter: 1, outcome: "error", text: "RangeError: too far" }],
    });
    await expect(replayed.run("return codemode.step('load', () => 1)")).rejects.toThrow("RangeError: too far");
    expect(replayed.submitted).toEqual([]);
  });

  it("a step under another name at that seq runs as new", async () => {
    const { run, submitted } = codemodeWith({
      replay: [{ kind: "step", seq: 0, name: "other", seqAfter: 1, outcome: "value", text: "1" }],
    });
    expect(await run("return codemode.step('load', () => 2)")).toBe(2);
    expect(submitted).toMatchObject([{ type: "step", seq: 0, name: "load", value: "2" }]);
  });
});

describe("codemode services", () => {
  it("discovery services take no seq; several arguments are sent as an array", async () => {
    const { run, submitted, seqs } = codemodeWith({ answer: () => '["hit"]' });
    expect(await run("return [await codemode.search('issues'), await codemode.describe('github', 'get')]")).toEqual([
      ["hit"],
      ["hit"],
    ]);
    expect(submitted.map(({ id: _id, ...request }) => request)).toEqual([
      { type: "service", name: "search", args: '"issues"' },
      { type: "service", name: "describe", args: '["github","get"]' },
    ]);
    expect(seqs.peek()).toBe(0);
  });

  it("R-SN-2: codemode.run compiles the snippet's body here, with the caller's input", async () => {
    const { run, submitted } = codemodeWith({
      services: ["run"],
      answer: (request) => {
        if (request.type === "call") return "";
        return request.args === '"double"'
          ? '{"body":"return (await github.get({ n: input })) ?? input * 2"}'
          : '{"error":"no such snippet"}';
      },
    });
    expect(await run("return [await codemode.run('double', 21), await codemode.run('missing')]")).toEqual([
      42,
      { error: "no such snippet" },
    ]);
    // The snippet's call joined this execution's numbering.
    expect(submitted.filter((request) => request.type === "call")).toMatchObject([{ seq: 0, args: '{"n":21}' }]);
  });

  it("codemode is frozen and offers only step and the pass's services", async () => {
    const { run } = codemodeWith({ services: ["search", "step", "fetch"] });
    expect(await run("return [Object.keys(codemode), Object.isFrozen(codemode)]")).toEqual([["step", "search"], true]);
  });
});

describe("fetch (R-SB-5)", () => {
  it("takes a seq like a step and gives a Response-like object over the recorded response", async () => {
    const { run, submitted } = codemodeWith({
      answer: () =>
        '{"url":"https://x.test/a","status":201,"statusText":"Created","headers":{"content-type":"application/json"},"body":"{\\"ok\\":1}"}',
    });
    const value = await run(
      "const response = await fetch('https://x.test/a', { method: 'post', body: 'x' }); return [response.status, response.ok, response.headers.get('Content-Type'), response.headers.has('x'), await response.json()]",
    );
    expect(value).toEqual([201, true, "application/json", false, { ok: 1 }]);
    expect(submitted).toMatchObject([
      {
        type: "service",
        name: "fetch",
        seq: 0,
        args: '{"input":"https://x.test/a","init":{"method":"post","headers":{},"body":"x"}}',
      },
    ]);
  });
});
