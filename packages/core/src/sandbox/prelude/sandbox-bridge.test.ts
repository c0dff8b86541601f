import { describe, expect, it } from "vitest";
import { partRealm } from "./part-realm-fixtures.js";
import { createSandboxBridge } from "./sandbox-bridge.js";

/** The sandbox's end of the bridge, compiled in a fresh realm from its source text. */
function bridgeInFreshRealm() {
  const { load, intrinsics, codec, read } = partRealm();
  const submitted: Array<{ id: number; text: string }> = [];
  const bridge = load(createSandboxBridge)(
    intrinsics,
    codec,
    // Arguments cross beside the request; put them back where the request had them.
    (id, text, args) =>
      submitted.push({ id, text: args === undefined ? text : JSON.stringify({ ...JSON.parse(text), args }) }),
    (_error, fallback) => fallback,
    1_000_000,
  );
  return { bridge, submitted, read };
}

describe("the sandbox's end of the bridge", () => {
  it("sends each request as JSON text with its own id, at once, in issue order", () => {
    const { bridge, submitted } = bridgeInFreshRealm();
    void bridge.send({ type: "call", seq: 0 }, true);
    void bridge.send({ type: "service", name: "search" }, false);
    expect(submitted).toEqual([
      { id: 1, text: '{"type":"call","seq":0}' },
      { id: 2, text: '{"type":"service","name":"search"}' },
    ]);
  });

  it("a delivery settles its own request: decoded when asked, raw text otherwise, or an Error", async () => {
    const { bridge, submitted } = bridgeInFreshRealm();
    const decoded = bridge.send({ n: 1 }, true);
    const raw = bridge.send({ n: 2 }, false);
    const refused = bridge.send({ n: 3 }, true);
    const empty = bridge.send({ n: 4 }, true);
    bridge.deliver(submitted[1]!.id, 0, '{"a":1}');
    bridge.deliver(submitted[0]!.id, 0, '{"big":{"$cm":"bigint","v":"9"}}');
    bridge.deliver(submitted[2]!.id, 1, "denied");
    bridge.deliver(submitted[3]!.id, 0, "");
    expect(await decoded).toEqual({ big: 9n });
    expect(await raw).toBe('{"a":1}');
    await expect(refused).rejects.toThrow("denied");
    expect(await empty).toBeUndefined();
  });

  it("a second delivery, or one for an unknown id, changes nothing; malformed wire text rejects", async () => {
    const { bridge, submitted } = bridgeInFreshRealm();
    const pending = bridge.send({}, true);
    bridge.deliver(99, 0, "1");
    bridge.deliver(submitted[0]!.id, 0, "{not json");
    bridge.deliver(submitted[0]!.id, 0, "2");
    await expect(pending).rejects.toMatchObject({ name: "ValueCodecError" });
  });

  it("requests are sent as null-prototype copies: Object.prototype.toJSON set by a program changes nothing", () => {
    const { bridge, submitted, read } = bridgeInFreshRealm();
    read("Object.prototype.toJSON = () => 'hijacked'");
    void bridge.send({ type: "call", seq: 0 }, true);
    expect(submitted[0]!.text).toBe('{"type":"call","seq":0}');
  });

  it("invalid tells the host why and leaves the program waiting forever", async () => {
    const { bridge, submitted } = bridgeInFreshRealm();
    let settled = false;
    void bridge.invalid(3, new Error("circular")).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(submitted.map((request) => JSON.parse(request.text))).toEqual([
      { type: "invalid", seq: 3, message: "a value could not be encoded" },
    ]);
    expect(settled).toBe(false);
  });
});
