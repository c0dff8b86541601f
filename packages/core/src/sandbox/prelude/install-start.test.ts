import { runInContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createFormatter } from "./install-console.js";
import { installStart } from "./install-start.js";
import { partRealm } from "./part-realm-fixtures.js";
import { createSandboxBridge } from "./sandbox-bridge.js";

/** A fresh realm with `__codemode_start` installed from its source text; what it reports goes to `finish`. */
function realmWithStart(finish: (text: string) => void) {
  const realm = partRealm();
  const { load, intrinsics, codec } = realm;
  const limits = { maxMessageChars: 10_000, maxReadChars: 16 * 1024 * 1024 };
  const formatter = load(createFormatter)(intrinsics, codec, limits);
  const bridge = load(createSandboxBridge)(intrinsics, codec, () => {}, formatter.messageOf, 1_000_000);
  const { messageOf, describeThrown } = formatter;
  load(installStart)(
    intrinsics,
    realm.global,
    codec,
    bridge.plain,
    messageOf,
    describeThrown,
    finish,
    limits.maxReadChars,
    bridge.denialText,
  );
  return { ...realm, bridge };
}

/** Runs `main` (source of a function) through `__codemode_start` in a fresh realm; the text it reports to `finish`. */
function start(main: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const { context } = realmWithStart(resolve);
    expect(runInContext(`__codemode_start(${main})`, context, { filename: "codemode.js" })).toBeUndefined();
  });
}

describe("installStart: how a program's end becomes one text", () => {
  it("a returned value is R + its wire text; undefined is R alone", async () => {
    expect(await start("async () => ({ total: 3n })")).toBe('R{"total":{"$cm":"bigint","v":"3"}}');
    expect(await start("() => undefined")).toBe("R");
  });

  it("a throw is T + its message and the position in codemode.js, synchronous or not", async () => {
    expect(JSON.parse((await start("async () => {\n  throw new TypeError('bad');\n}")).slice(1))).toEqual({
      message: "TypeError: bad",
      line: 2,
      column: 9,
    });
    expect(JSON.parse((await start("() => { throw 'text' }")).slice(1))).toEqual({
      message: "Uncaught text",
      line: null,
      column: null,
    });
  });

  it("R-AP-9: a denial the bridge delivered and the program did not catch is D + its message; the program's own ApprovalDenied is a T", async () => {
    const reports: string[] = [];
    const { context, bridge, global } = realmWithStart((text) => reports.push(text));
    global.ask = () => bridge.send({ type: "call" }, true);
    runInContext("__codemode_start(async () => { await ask(); })", context, { filename: "codemode.js" });
    bridge.deliver(1, 2, "shop.order was denied by ann: too much");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(reports).toHaveLength(1);
    expect(reports[0]![0]).toBe("D");
    expect(JSON.parse(reports[0]!.slice(1)).message).toBe("shop.order was denied by ann: too much");

    const rewritten: string[] = [];
    const second = realmWithStart((text) => rewritten.push(text));
    second.global.ask = () => second.bridge.send({ type: "call" }, true);
    runInContext(
      "__codemode_start(async () => { try { await ask(); } catch (e) { e.message = 'shop.order was denied by cfo: fraud'; throw e; } })",
      second.context,
      { filename: "codemode.js" },
    );
    second.bridge.deliver(1, 2, "shop.order was denied by ann: too much");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(rewritten).toEqual(['D{"message":"shop.order was denied by ann: too much"}']);

    const forged = await start(
      "async () => { const error = new Error('shop.order was denied'); error.name = 'ApprovalDenied'; throw error; }",
    );
    expect(forged[0]).toBe("T");
  });

  it("R-AP-9: a caught denial is an error named ApprovalDenied with the reason in its message", async () => {
    const reports: string[] = [];
    const { context, bridge, global } = realmWithStart((text) => reports.push(text));
    global.ask = () => bridge.send({ type: "call" }, true);
    runInContext(
      "__codemode_start(async () => { try { await ask(); } catch (error) { return [error.name, error.message, error instanceof Error]; } })",
      context,
      { filename: "codemode.js" },
    );
    bridge.deliver(1, 2, "shop.order was denied: no");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(reports).toEqual(['R["ApprovalDenied","shop.order was denied: no",true]']);
  });

  it("a value that cannot be encoded is N + why", async () => {
    expect(await start("() => ({ callback() {} })")).toMatch(/^Na function at callback cannot be stored or passed/);
  });

  it("__codemode_start can be called once: it removes itself first", async () => {
    expect(await start("() => typeof __codemode_start")).toBe('R"undefined"');
  });

  it("R-RT-5: it returns nothing and reports once through finish, so the host never waits on a promise of the isolate", async () => {
    const reports: string[] = [];
    const { read } = realmWithStart((text) => reports.push(text));
    expect(read("__codemode_start(async () => 1)")).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(reports).toEqual(["R1"]);
  });
});
