/** The isolated-vm executor: values that cross the boundary, both ways. */
import { describe, expect, it } from "vitest";
import {
  encode,
  expectFailed,
  expectHaltedOnInvalid,
  expectReturned,
  isolatedVmExecutorForTests,
} from "../pass-fixtures.js";
import { valueCodec } from "../prelude/value-codec.js";

const { executor, run } = isolatedVmExecutorForTests();

describe("R-SB-4 values across the boundary", () => {
  it("R-SB-4: host results arrive as sandbox values: Uint8Array, bigint, nested objects in key order", async () => {
    const hostValue = {
      zeta: 1,
      alpha: { y: [1, { deep: true }], b: null },
      big: 2n ** 70n,
      bytes: new Uint8Array([0, 255, 7]),
    };
    const outcome = await run(
      `async () => {
        const r = await github.get({});
        return {
          keys: Object.keys(r), innerKeys: Object.keys(r.alpha),
          isBytes: r.bytes instanceof Uint8Array, byte: r.bytes[1],
          bigType: typeof r.big, bigPlusOne: r.big + 1n,
          echo: r,
        };
      }`,
      { answer: () => ({ kind: "value", value: encode(hostValue) }) },
    );
    expect(expectReturned(outcome)).toEqual({
      keys: ["zeta", "alpha", "big", "bytes"],
      innerKeys: ["y", "b"],
      isBytes: true,
      byte: 255,
      bigType: "bigint",
      bigPlusOne: 2n ** 70n + 1n,
      echo: hostValue,
    });
    expect(outcome.result.status === "returned" && outcome.result.value).toContain(`"echo":${encode(hostValue)}`);
  });

  it("R-SB-4: arguments reach the host as wire text in the program's key order", async () => {
    const outcome = await run(
      "async () => { await github.create_issue({ z: 1, a: [1, 2n], bytes: new Uint8Array([1, 2]), when: new Date(0), skip: undefined, $cm: 'user data' }); }",
    );
    expect(outcome.requests).toEqual([
      {
        type: "call",
        seq: 0,
        connector: "github",
        method: "create_issue",
        args: '{"$cm":"object","v":{"z":1,"a":[1,{"$cm":"bigint","v":"2"}],"bytes":{"$cm":"bytes","v":"AQI="},"when":"1970-01-01T00:00:00.000Z","$cm":"user data"}}',
      },
    ]);
    expect(valueCodec.decode((outcome.requests[0] as { args: string }).args)).toEqual({
      z: 1,
      a: [1, 2n],
      bytes: new Uint8Array([1, 2]),
      when: "1970-01-01T00:00:00.000Z",
      $cm: "user data",
    });
  });

  it("R-SB-4: a call without an argument sends empty wire text", async () => {
    const outcome = await run("async () => { await github.get(); await github.get(undefined); }");
    expect(outcome.requests.map((request) => (request as { args: string }).args)).toEqual(["", ""]);
  });

  it("R-SB-4: a host error becomes a rejected promise with its message the program can catch", async () => {
    const outcome = await run(
      "async () => { try { await github.get({ repo: 'missing' }); return 'no error'; } catch (error) { return { isError: error instanceof Error, message: error.message }; } }",
      { answer: () => ({ kind: "error", message: "repo not found: missing" }) },
    );
    expect(expectReturned(outcome)).toEqual({ isError: true, message: "repo not found: missing" });
  });

  it("R-SB-4: onRequest rejecting or throwing reaches the program as an error, not the host", async () => {
    const rejecting = await run(
      "async () => { try { await github.get({}); } catch (error) { return error.message; } }",
      {
        answer: () => Promise.reject(new Error("store unavailable")),
      },
    );
    expect(expectReturned(rejecting)).toBe("store unavailable");
    const throwing = await executor.runPass({
      code: "async () => { try { await github.get({}); } catch (error) { return error.message; } }",
      connectors: { github: ["get"] },
      onRequest: () => {
        throw new Error("thrown synchronously");
      },
    });
    expect(throwing).toEqual({ status: "returned", value: '"thrown synchronously"', logs: [] });
  });

  it("R-SB-4: an uncaught host error fails the pass with its message", async () => {
    const error = expectFailed(
      await run("async () => { await github.get({}); }", {
        answer: () => ({ kind: "error", message: "rate limited" }),
      }),
      "PROGRAM_ERROR",
    );
    expect(error).toContain("rate limited");
  });

  it("R-SB-4: a host reply that is not wire text rejects inside the sandbox", async () => {
    const outcome = await run(
      "async () => { try { await github.get({}); return 'accepted'; } catch (error) { return error.message; } }",
      {
        answer: () => ({ kind: "value", value: "{not json" }),
      },
    );
    expect(expectReturned(outcome)).toContain("malformed wire text");
  });

  it("R-SB-4: a value the program returns crosses whole, in key order", async () => {
    const outcome = await run(
      "async () => ({ b: 1, a: { d: [1, 'two', null, true], c: 3n }, bytes: new Uint8Array([9]) })",
    );
    expect(outcome.result).toMatchObject({
      status: "returned",
      value: '{"b":1,"a":{"d":[1,"two",null,true],"c":{"$cm":"bigint","v":"3"}},"bytes":{"$cm":"bytes","v":"CQ=="}}',
    });
  });

  it("R-SB-4: returning undefined gives empty wire text", async () => {
    expect((await run("async () => { await github.get({}); }")).result).toEqual({
      status: "returned",
      value: "",
      logs: [],
    });
  });

  it("R-DV-1: an unserializable result is NOT_SERIALIZABLE naming the path", async () => {
    const error = expectFailed(await run("async () => ({ issue: { labels: [1, () => 2] } })"), "NOT_SERIALIZABLE");
    expect(error).toContain("a function at issue.labels[1]");
  });

  it("R-DV-1: unserializable arguments send an invalid request and the host's halt ends the pass", async () => {
    const outcome = await run("async () => { await github.create_issue({ onDone: () => 1 }); return 'went on'; }");
    expectHaltedOnInvalid(outcome, "a function at onDone");
  });

  it("R-SB-4: a connector takes one argument", async () => {
    const outcome = await run(
      "async () => { try { await github.get({ a: 1 }, { b: 2 }); } catch (error) { return error.message; } }",
    );
    expect(expectReturned(outcome)).toBe("github.get takes one argument (an object)");
    expect(outcome.requests).toEqual([]);
  });
});
