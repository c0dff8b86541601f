import { describe, expect, it } from "vitest";
import type { ReplayEntry } from "../executor.js";
import { wireReplay } from "../sandbox-config.js";
import { installConnectors, type SandboxReplayEntry } from "./install-connectors.js";
import { partRealm } from "./part-realm-fixtures.js";
import { createSandboxBridge } from "./sandbox-bridge.js";

type Method = (...args: unknown[]) => Promise<unknown>;

/**
 * A fresh realm with the connector globals installed from their source text, over the real
 * sandbox bridge; `submitted` is what reached the host (parsed), `deliver` answers it.
 */
function connectorsWith(replay: SandboxReplayEntry[] = []) {
  const { global, load, intrinsics, codec, read } = partRealm();
  const submitted: Array<Record<string, unknown> & { id: number }> = [];
  const bridge = load(createSandboxBridge)(
    intrinsics,
    codec,
    (id, text, args) => submitted.push({ id, ...JSON.parse(text), ...(args === undefined ? {} : { args }) }),
    (_error, fallback) => fallback,
    1_000_000,
  );
  const seqs = load(installConnectors)(
    intrinsics,
    global,
    { github: ["get", "create_issue"], slack: ["post"] },
    wireReplay(replay as ReplayEntry[]),
    codec,
    bridge,
  );
  return {
    github: global.github as Record<string, Method>,
    slack: global.slack as Record<string, Method>,
    submitted,
    seqs,
    deliver: bridge.deliver,
    read,
  };
}

const recordedGet = (fields: Partial<SandboxReplayEntry> = {}): SandboxReplayEntry => ({
  kind: "call",
  seq: 0,
  connector: "github",
  method: "get",
  args: '{"id":1}',
  outcome: "value",
  text: '{"title":"recorded"}',
  ...fields,
});

describe("installConnectors: seqs (R-RP-1)", () => {
  it("numbers calls at the call site, so concurrent calls reach the host in issue order", () => {
    const { github, slack, submitted } = connectorsWith();
    void github.get!({ id: 1 });
    void slack.post!({ text: "hi" });
    void github.create_issue!();
    expect(submitted.map(({ seq, connector, method, args }) => [seq, connector, method, args])).toEqual([
      [0, "github", "get", '{"id":1}'],
      [1, "slack", "post", '{"text":"hi"}'],
      [2, "github", "create_issue", ""],
    ]);
  });

  it("a call resolves with the host's decoded reply, or rejects with its error message", async () => {
    const { github, submitted, deliver } = connectorsWith();
    const answered = github.get!({ id: 1 });
    const refused = github.create_issue!({ title: "x" });
    deliver(submitted[0]!.id, 0, '{"n":{"$cm":"bigint","v":"7"}}');
    deliver(submitted[1]!.id, 1, "not allowed");
    expect(await answered).toEqual({ n: 7n });
    await expect(refused).rejects.toThrow("not allowed");
  });

  it("the counter is shared: steps take seqs, and a replayed step moves it on, never back", () => {
    const { github, seqs, submitted } = connectorsWith([recordedGet({ seq: 4 })]);
    expect(seqs.take()).toBe(0);
    expect(seqs.peek()).toBe(1);
    seqs.skipTo(5);
    seqs.skipTo(2);
    void github.get!({ id: 1 });
    expect(submitted.map((request) => request.seq)).toEqual([5]);
    expect(seqs.recorded(4)).toMatchObject({ connector: "github", method: "get" });
    expect(seqs.recorded(5)).toBeUndefined();
  });

  it("more than one argument is refused without taking a seq", async () => {
    const { github, submitted, seqs } = connectorsWith();
    await expect(github.get!({ id: 1 }, "extra")).rejects.toThrow("github.get takes one argument (an object)");
    expect(submitted).toEqual([]);
    expect(seqs.peek()).toBe(0);
  });

  it("R-DV-1: an argument that cannot be encoded is reported as invalid with its seq and never settles", async () => {
    const { github, submitted } = connectorsWith();
    let settled = false;
    void github.get!({ callback: () => 1 }).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(submitted).toMatchObject([{ type: "invalid", seq: 0 }]);
    expect(settled).toBe(false);
  });

  it("R-SB-1: connector globals are frozen, enumerable, and cannot be replaced by the program", () => {
    const { read } = connectorsWith();
    expect(
      read("[Object.isFrozen(github), Object.keys(globalThis), Object.getPrototypeOf(github), github.get.name]"),
    ).toEqual([true, ["github", "slack"], null, "get"]);
    expect(read("'use strict'; try { github = {}; 'replaced' } catch { 'kept' }")).toBe("kept");
  });
});

describe("installConnectors: the preloaded replay table (R-ST-2)", () => {
  it("a recorded call with the same arguments is answered inside the sandbox, without a bridge trip", async () => {
    const { github, submitted } = connectorsWith([recordedGet()]);
    expect(await github.get!({ id: 1 })).toEqual({ title: "recorded" });
    expect(submitted).toEqual([]);
    void github.get!({ id: 1 });
    expect(submitted).toMatchObject([{ type: "call", seq: 1 }]);
  });

  it("arguments written in another key order still match, by canonical text", async () => {
    const byArgs = connectorsWith([recordedGet({ args: '{"a":1,"b":[2,3]}' })]);
    expect(await byArgs.github.get!({ b: [2, 3], a: 1 })).toEqual({ title: "recorded" });
    const byCanonical = connectorsWith([recordedGet({ args: undefined, canonicalArgs: '{"a":1,"b":2}' })]);
    expect(await byCanonical.github.get!({ b: 2, a: 1 })).toEqual({ title: "recorded" });
    expect([...byArgs.submitted, ...byCanonical.submitted]).toEqual([]);
  });

  it("a call recorded without arguments matches a call without arguments; undefined results replay as undefined", async () => {
    const { github, submitted } = connectorsWith([recordedGet({ args: "", text: "" })]);
    expect(await github.get!()).toBeUndefined();
    expect(submitted).toEqual([]);
  });

  it("a recorded error replays as the same rejection", async () => {
    const { github, submitted } = connectorsWith([recordedGet({ outcome: "error", text: "rate limited" })]);
    await expect(github.get!({ id: 1 })).rejects.toThrow("rate limited");
    expect(submitted).toEqual([]);
  });

  it("another connector, method or arguments at that seq goes to the host, which decides (divergence)", () => {
    for (const call of [
      (github: Record<string, Method>) => github.create_issue!({ id: 1 }),
      (github: Record<string, Method>) => github.get!({ id: 2 }),
    ]) {
      const { github, submitted } = connectorsWith([recordedGet()]);
      void call(github);
      expect(submitted).toMatchObject([{ type: "call", seq: 0 }]);
    }
    const other = connectorsWith([recordedGet()]);
    void other.slack.post!({ id: 1 });
    expect(other.submitted).toMatchObject([{ type: "call", seq: 0, connector: "slack" }]);
  });

  it("a step recorded at that seq is not a call's answer", () => {
    const { github, submitted } = connectorsWith([
      { kind: "step", seq: 0, name: "get", seqAfter: 1, outcome: "value", text: "1" },
    ]);
    void github.get!({ id: 1 });
    expect(submitted).toMatchObject([{ type: "call", seq: 0 }]);
  });
});
