import { afterAll, describe, expect, it } from "vitest";
import type { HostReply, PassRequest, PassResult, ReplayEntry, SandboxRequest } from "./executor.js";
import { createIsolatedVmExecutor } from "./isolated-vm-executor.js";
import { valueCodec } from "./value-codec.js";

const executor = createIsolatedVmExecutor({ timeoutMs: 5_000 });
afterAll(() => executor.close());

type Answer = (request: SandboxRequest) => HostReply | Promise<HostReply>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const decodeArgs = (text: string): unknown => (text === "" ? null : valueCodec.decode(text));
const encode = (value: unknown): string => valueCodec.encode(value) ?? "";

/** The host the runtime would be, reduced: a call echoes its seq and arguments; invalid requests halt. */
const echo: Answer = (request) => {
  switch (request.type) {
    case "call":
      return {
        kind: "value",
        value: encode({
          seq: request.seq,
          connector: request.connector,
          method: request.method,
          args: decodeArgs(request.args),
        }),
      };
    case "step":
      return { kind: "value", value: "" };
    case "service":
      return { kind: "value", value: encode({ service: request.name, args: decodeArgs(request.args) }) };
    case "invalid":
      return { kind: "halt" };
  }
};

interface RunOptions extends Partial<Omit<PassRequest, "code" | "onRequest">> {
  answer?: Answer;
  run?: (request: PassRequest) => Promise<PassResult>;
}

interface Run {
  result: PassResult;
  requests: SandboxRequest[];
  /** The decoded result when the program returned. */
  value: unknown;
  /** onRequest calls that happened after runPass resolved (read it after waiting a little). */
  lateRequests: () => number;
}

async function run(code: string, options: RunOptions = {}): Promise<Run> {
  const requests: SandboxRequest[] = [];
  let ended = false;
  let late = 0;
  const answer = options.answer ?? echo;
  const request: PassRequest = {
    connectors: { github: ["get", "create_issue"] },
    deterministic: { seed: "execution-1", clockMs: Date.UTC(2024, 0, 2, 3, 4, 5) },
    ...options,
    code,
    onRequest: async (sandboxRequest) => {
      if (ended) late++;
      requests.push(sandboxRequest);
      return answer(sandboxRequest);
    },
  };
  const result = await (options.run ?? ((passRequest) => executor.runPass(passRequest)))(request);
  ended = true;
  const value =
    result.status === "returned" ? (result.value === "" ? undefined : valueCodec.decode(result.value)) : undefined;
  return { result, requests, value, lateRequests: () => late };
}

function expectReturned(outcome: Run): unknown {
  expect(outcome.result, JSON.stringify(outcome.result)).toMatchObject({ status: "returned" });
  return outcome.value;
}

function expectFailed(outcome: Run, code: string): string {
  expect(outcome.result, JSON.stringify(outcome.result)).toMatchObject({ status: "failed", code });
  return outcome.result.status === "failed" ? outcome.result.error : "";
}

describe("R-SB-1 globals", () => {
  it("R-SB-1: each connector, codemode, console, crypto and pass-scoped timers are globals", async () => {
    const value = expectReturned(
      await run(
        "async () => [typeof github, typeof github.get, typeof github.create_issue, typeof codemode, typeof codemode.step, typeof console.log, typeof crypto.randomUUID, typeof setTimeout, typeof clearInterval, typeof queueMicrotask]",
      ),
    );
    expect(value).toEqual([
      "object",
      "function",
      "function",
      "object",
      "function",
      "function",
      "function",
      "function",
      "function",
      "function",
    ]);
  });

  it("R-SB-1: a connector global has exactly its configured methods", async () => {
    const value = expectReturned(
      await run("async () => ({ github: Object.keys(github), slack: Object.keys(slack) })", {
        connectors: { github: ["get"], slack: ["post", "list"] },
      }),
    );
    expect(value).toEqual({ github: ["get"], slack: ["post", "list"] });
  });

  it("R-SB-1: require, process, fetch and the other host globals are absent", async () => {
    const value = expectReturned(
      await run(
        "async () => [typeof require, typeof process, typeof fetch, typeof Buffer, typeof module, typeof exports, typeof global, typeof setImmediate, typeof WebAssembly, typeof __codemode_start, typeof XMLHttpRequest]",
      ),
    );
    expect(value).toEqual(Array(11).fill("undefined"));
  });

  it("R-SB-1: ECMAScript built-ins work", async () => {
    const value = expectReturned(
      await run(
        "async () => [JSON.stringify({ a: [1] }), [3, 1, 2].toSorted().join(), new Map([[1, 2]]).get(1), Object.groupBy([1, 2, 3], (n) => n % 2 ? 'odd' : 'even').odd.length, /a(b)/.exec('ab')[1], 2n ** 64n === 18446744073709551616n]",
      ),
    );
    expect(value).toEqual(['{"a":[1]}', "1,2,3", 2, 2, "b", true]);
  });

  it("R-SB-1: codemode services exist only when the host answers them, and take no seq", async () => {
    const without = expectReturned(await run("async () => [typeof codemode.search, typeof codemode.describe]"));
    expect(without).toEqual(["undefined", "undefined"]);
    const outcome = await run(
      "async () => { const found = await codemode.search('open issues'); const docs = await codemode.describe('github.get'); const call = await github.get({}); return { found, docs, seq: call.seq } }",
      {
        services: ["search", "describe"],
      },
    );
    expect(expectReturned(outcome)).toEqual({
      found: { service: "search", args: "open issues" },
      docs: { service: "describe", args: "github.get" },
      seq: 0,
    });
    expect(outcome.requests.slice(0, 2)).toEqual([
      { type: "service", name: "search", args: '"open issues"' },
      { type: "service", name: "describe", args: '"github.get"' },
    ]);
  });

  it("R-SB-5: allowNetwork gives a fetch answered by the host, numbered like a step, with a Response-like result", async () => {
    const response = {
      url: "https://example.com/a",
      status: 200,
      statusText: "OK",
      headers: { "content-type": "application/json" },
      body: '{"hello":"world"}',
    };
    const outcome = await run(
      "async () => { const page = await fetch('https://example.com/a', { method: 'GET' }); const call = await github.get({}); return { ok: page.ok, status: page.status, type: page.headers.get('Content-Type'), body: await page.json(), seq: call.seq } }",
      {
        allowNetwork: true,
        answer: (request) =>
          request.type === "service" && request.name === "fetch"
            ? { kind: "value", value: encode(response) }
            : echo(request),
      },
    );
    expect(expectReturned(outcome)).toEqual({
      ok: true,
      status: 200,
      type: "application/json",
      body: { hello: "world" },
      seq: 1,
    });
    expect(outcome.requests[0]).toEqual({
      type: "service",
      name: "fetch",
      seq: 0,
      args: encode({ input: "https://example.com/a", init: { method: "GET", headers: {}, body: null } }),
    });
  });
});

describe("R-SB-2 code forms", () => {
  const forms: Array<[string, string, unknown]> = [
    ["an async arrow", "async () => {\n  const issue = await github.get({ id: 7 });\n  return issue.args.id;\n}", 7],
    ["an async arrow with an expression body", "async () => (await github.get({ id: 8 })).args.id", 8],
    ["a plain function expression", "(function () { return 'plain'; })", "plain"],
    [
      "a function body whose last expression is the result",
      "const issue = await github.get({ id: 9 });\nconst doubled = issue.args.id * 2;\ndoubled",
      18,
    ],
    [
      "a body with an explicit return",
      "const a = await github.get({});\nif (a.seq === 0) return 'first';\n'not reached'",
      "first",
    ],
    [
      "a ```js fence with prose around it",
      "Here you go:\n\n```js\nconst r = await github.get({ id: 1 });\nr.args.id + 1\n```\nDone.",
      2,
    ],
    ["a ```ts fence", "```ts\nconst r: { args: { id: number } } = await github.get({ id: 2 });\nr.args.id\n```", 2],
    ["a ```typescript fence", "```typescript\nasync (): Promise<string> => 'typed'\n```", "typed"],
    [
      "export default async function",
      "export default async function main() {\n  return (await github.get({ id: 3 })).args.id;\n}",
      3,
    ],
    ["export default function", "export default function () { return 'sync function'; }", "sync function"],
    ["export default arrow", "export default async () => 'arrow';", "arrow"],
    ["export default value", "const total = 40 + 2;\nexport default total;", 42],
    [
      "TypeScript with an interface, annotations, `as`, generics and an enum",
      [
        "interface Issue { seq: number; args: { id: number } }",
        "enum Level { Low = 1, High = 5 }",
        "function pick<T, K extends keyof T>(item: T, key: K): T[K] { return item[key]; }",
        "async (): Promise<number> => {",
        "  const issue = (await github.get({ id: 4 })) as Issue;",
        "  const id: number = pick(issue, 'args').id;",
        "  return id * Level.High;",
        "}",
      ].join("\n"),
      20,
    ],
  ];
  for (const [name, code, expected] of forms) {
    it(`R-SB-2: runs ${name}`, async () => {
      expect(expectReturned(await run(code))).toEqual(expected);
    });
  }

  it("R-SB-2: a body of statements without a final expression returns undefined", async () => {
    const outcome = await run("const a = 1;\nlet b = a + 1;");
    expect(outcome.result).toEqual({ status: "returned", value: "", logs: [] });
  });

  it("R-SB-2: SYNTAX_ERROR carries the line and column of the error in a multi-line arrow", async () => {
    // Line 3 is "  const count = issues.length +* 2;": the stray "*" is at column 32.
    const error = expectFailed(
      await run(
        "async () => {\n  const issues = await github.get({});\n  const count = issues.length +* 2;\n  return count;\n}",
      ),
      "SYNTAX_ERROR",
    );
    expect(error).toMatch(/\(line 3, column 32\)$/);
  });

  it("R-SB-2: SYNTAX_ERROR in a body of statements carries line and column", async () => {
    const error = expectFailed(await run("const a = 1;\nconst b = 2;\nif (a < b {\n  a\n}"), "SYNTAX_ERROR");
    expect(error).toMatch(/\(line 3, column 11\)$/);
  });

  it("R-SB-2: SYNTAX_ERROR in a Markdown fence counts lines in the original text", async () => {
    const error = expectFailed(
      await run(
        "I will fetch the issue first.\n\nThen count.\n\n```js\nconst issue = await github.get({});\nconst x = (1;\n```",
      ),
      "SYNTAX_ERROR",
    );
    expect(error).toMatch(/\(line 7, column 13\)$/);
  });

  it("R-SB-2: SYNTAX_ERROR in TypeScript points into what the model wrote", async () => {
    const error = expectFailed(
      await run("```ts\nconst a: number = 1;\nconst b: string = 'x';\nlet c = {;\n```"),
      "SYNTAX_ERROR",
    );
    expect(error).toMatch(/\(line 4, column 10\)$/);
  });

  it("R-SB-2: a runtime error carries the line where it was thrown", async () => {
    const error = expectFailed(
      await run("async () => {\n  const a = 1;\n  const b = 2;\n  throw new Error('boom at four');\n}"),
      "SANDBOX_ERROR",
    );
    expect(error).toMatch(/^Error: boom at four \(line 4, column \d+\)$/);
  });

  it("R-SB-2: a runtime error in a fence carries the line in the original text", async () => {
    const error = expectFailed(
      await run("Plan:\n- get\n\n```js\nconst a = await github.get({});\na.missing.deeper\n```"),
      "SANDBOX_ERROR",
    );
    expect(error).toMatch(/^TypeError: .*\(line 6, column \d+\)$/);
  });

  it("R-SB-2: a runtime error in TypeScript keeps its line after stripped types", async () => {
    const error = expectFailed(
      await run(
        "interface A { x: number }\ntype B = A[];\nconst list: B = [];\nconst first = list[0] as A;\nfirst.x.toFixed();",
      ),
      "SANDBOX_ERROR",
    );
    expect(error).toMatch(/\(line 5, column \d+\)$/);
  });

  it("R-SB-2: a fence inside a template literal belongs to the program", async () => {
    const code =
      "async () => {\n  const body = `Repro:\n~~~js\nbroken()\n~~~\n`;\n  const issue = await github.create_issue({ body });\n  return issue.args.body.length;\n}";
    expect(expectReturned(await run(code))).toBe("Repro:\n~~~js\nbroken()\n~~~\n".length);
  });
});

describe("R-SB-3 limits", () => {
  it("R-SB-3: TIMEOUT names the limit set on the request", async () => {
    const error = expectFailed(await run("async () => { while (true) {} }", { timeoutMs: 300 }), "TIMEOUT");
    expect(error).toContain("300 ms");
  });

  it("R-SB-3: TIMEOUT names the executor's default limit when the request sets none", async () => {
    const short = createIsolatedVmExecutor({ timeoutMs: 250 });
    try {
      const error = expectFailed(
        await run("async () => { await new Promise(() => {}); }", { run: (request) => short.runPass(request) }),
        "TIMEOUT",
      );
      expect(error).toContain("250 ms");
    } finally {
      await short.close();
    }
  });

  it("R-SB-3: MEMORY_LIMIT names the heap limit", async () => {
    const error = expectFailed(
      await run("async () => { const keep = []; while (true) keep.push(new Array(100000).fill(keep.length)); }", {
        memoryMb: 32,
      }),
      "MEMORY_LIMIT",
    );
    expect(error).toContain("32 MB");
  });

  it("R-SB-3: MEMORY_LIMIT names the executor's default heap limit when the request sets none", async () => {
    const small = createIsolatedVmExecutor({ memoryMb: 24 });
    try {
      const error = expectFailed(
        await run("async () => { const keep = []; while (true) keep.push(new Array(100000).fill(1)); }", {
          run: (request) => small.runPass(request),
        }),
        "MEMORY_LIMIT",
      );
      expect(error).toContain("24 MB");
    } finally {
      await small.close();
    }
  });

  it("R-SB-3: the executor keeps working after a failed pass, and every pass starts fresh", async () => {
    expectFailed(await run("globalThis.leftover = 'from before'; while (true) {}", { timeoutMs: 200 }), "TIMEOUT");
    expect(expectReturned(await run("typeof globalThis.leftover"))).toBe("undefined");
    expect(expectReturned(await run("Object.prototype.polluted = 1; 'set'"))).toBe("set");
    expect(expectReturned(await run("({}).polluted === undefined"))).toBe(true);
  });

  it("R-SB-3: passes running at the same time stay apart", async () => {
    const code =
      "async () => { const a = await github.get({ who: WHO }); await new Promise((r) => setTimeout(r, 20)); const b = await github.get({ who: WHO }); return [a.seq, b.seq, b.args.who, Math.random()] }";
    const [one, two] = await Promise.all([
      run(code.replaceAll("WHO", "'one'"), { deterministic: { seed: "one", clockMs: 0 } }),
      run(code.replaceAll("WHO", "'two'"), { deterministic: { seed: "two", clockMs: 0 } }),
    ]);
    const first = expectReturned(one) as unknown[];
    const second = expectReturned(two) as unknown[];
    expect(first.slice(0, 3)).toEqual([0, 1, "one"]);
    expect(second.slice(0, 3)).toEqual([0, 1, "two"]);
    expect(first[3]).not.toBe(second[3]);
  });

  it("R-SB-3: close() ends a pass that is still running instead of leaving it hanging", async () => {
    const closing = createIsolatedVmExecutor({ timeoutMs: 10_000 });
    const pending = run("async () => { await github.get({}); while (true) {} }", {
      run: (request) => closing.runPass(request),
    });
    await sleep(100);
    await closing.close();
    const outcome = await pending;
    expect(outcome.result.status).toBe("failed");
  });
});

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
      "SANDBOX_ERROR",
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
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: expect.stringContaining("a function at onDone") },
    ]);
  });

  it("R-SB-4: a connector takes one argument", async () => {
    const outcome = await run(
      "async () => { try { await github.get({ a: 1 }, { b: 2 }); } catch (error) { return error.message; } }",
    );
    expect(expectReturned(outcome)).toBe("github.get takes one argument (an object)");
    expect(outcome.requests).toEqual([]);
  });
});

describe("R-SB-6 replay-stable clock and randomness", () => {
  const probe = `async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(8));
    const words = crypto.getRandomValues(new Uint32Array(2));
    return {
      now: Date.now(), iso: new Date().toISOString(), text: Date(),
      randoms: [Math.random(), Math.random(), Math.random()],
      uuid: crypto.randomUUID(), bytes: Array.from(bytes), words: Array.from(words),
    };
  }`;
  type Probe = {
    now: number;
    iso: string;
    text: string;
    randoms: number[];
    uuid: string;
    bytes: number[];
    words: number[];
  };
  const clockMs = Date.UTC(2024, 4, 6, 7, 8, 9);

  it("R-SB-6: the same seed and clock give the same values on every pass", async () => {
    const one = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    const two = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    expect(two).toEqual(one);
    expect(one.now).toBe(clockMs);
    expect(one.iso).toBe(new Date(clockMs).toISOString());
    expect(new Set(one.randoms).size).toBe(3);
    for (const random of one.randoms) expect(random >= 0 && random < 1).toBe(true);
    expect(one.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("R-SB-6: a different seed gives different randomness and the same clock", async () => {
    const one = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    const two = expectReturned(await run(probe, { deterministic: { seed: "exec-b", clockMs } })) as Probe;
    expect(two.now).toBe(one.now);
    expect(two.randoms).not.toEqual(one.randoms);
    expect(two.uuid).not.toBe(one.uuid);
    expect(two.bytes).not.toEqual(one.bytes);
  });

  it("R-SB-6: a different clock moves the clock and not the randomness", async () => {
    const one = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    const two = expectReturned(
      await run(probe, { deterministic: { seed: "exec-a", clockMs: clockMs + 1_000 } }),
    ) as Probe;
    expect(two.now).toBe(clockMs + 1_000);
    expect(two.randoms).toEqual(one.randoms);
  });

  it("R-SB-6: deterministic: false gives the real clock and fresh randomness", async () => {
    const one = expectReturned(await run(probe, { deterministic: false })) as Probe;
    const two = expectReturned(await run(probe, { deterministic: false })) as Probe;
    expect(one.now).not.toBe(clockMs);
    expect(Math.abs(one.now - Date.now())).toBeLessThan(60_000);
    expect(two.randoms).not.toEqual(one.randoms);
    expect(two.uuid).not.toBe(one.uuid);
    expect(one.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("R-SB-6: Date keeps working as Date with the clock held still", async () => {
    const value = expectReturned(
      await run(
        "async () => [new Date(0).toISOString(), new Date(2020, 0, 1).getFullYear(), Date.UTC(2000, 0, 1), Date.parse('2001-01-01T00:00:00Z'), new Date() instanceof Date, new Date().constructor === Date, typeof Date(), Date.now() === new Date().getTime()]",
        {
          deterministic: { seed: "s", clockMs },
        },
      ),
    );
    expect(value).toEqual([
      "1970-01-01T00:00:00.000Z",
      2020,
      Date.UTC(2000, 0, 1),
      Date.parse("2001-01-01T00:00:00Z"),
      true,
      true,
      "string",
      true,
    ]);
  });

  it("R-SB-6: getRandomValues refuses float arrays and oversized requests", async () => {
    const value = expectReturned(
      await run(
        "async () => { const out = []; for (const make of [() => new Float64Array(2), () => new Uint8Array(70000), () => ({})]) { try { crypto.getRandomValues(make()); out.push('accepted'); } catch (error) { out.push(error.name); } } return out; }",
      ),
    );
    expect(value).toEqual(["TypeError", "RangeError", "TypeError"]);
  });
});

describe("console capture (R-SB-1)", () => {
  it("R-SB-1: console output is captured; warn and error are prefixed", async () => {
    const outcome = await run(
      "async () => { console.log('plain', 1, { a: [1n] }); console.info('info'); console.debug('debug'); console.warn('careful'); console.error('broken', null); return 1; }",
    );
    expect(outcome.result).toEqual({
      status: "returned",
      value: "1",
      logs: ['plain 1 {"a":[{"$cm":"bigint","v":"1"}]}', "info", "debug", "[warn] careful", "[error] broken null"],
    });
  });

  it("R-SB-1: logs survive a failing pass", async () => {
    const outcome = await run("async () => { console.log('before'); throw new Error('after'); }");
    expect(outcome.result).toMatchObject({ status: "failed", code: "SANDBOX_ERROR", logs: ["before"] });
  });

  it("R-SB-1: errors and functions are printed readably", async () => {
    const outcome = await run(
      "async () => { console.log(new TypeError('bad'), function named() {}, undefined, Symbol('s')); }",
    );
    const line = outcome.result.logs[0]!;
    expect(line).toMatch(/^TypeError: bad\n/);
    expect(line).toMatch(/\[Function named\] undefined Symbol\(s\)$/);
  });
});

describe("R-RP-1 sequence numbers and replay", () => {
  it("R-RP-1: calls and steps take seqs in the order the program issues them", async () => {
    const outcome = await run(
      "async () => { const a = await github.get({ n: 'a' }); const s = await codemode.step('stamp', () => 5); const b = await github.create_issue({ n: 'b' }); return [a.seq, s, b.seq]; }",
    );
    expect(expectReturned(outcome)).toEqual([0, 5, 2]);
    expect(outcome.requests.map((request) => [request.type, (request as { seq: number }).seq])).toEqual([
      ["call", 0],
      ["step", 1],
      ["call", 2],
    ]);
  });

  it("R-RP-1: Promise.all keeps call-site order whatever the host latencies", async () => {
    const delays = [80, 0, 40, 10];
    const outcome = await run(
      "async () => { const all = await Promise.all([0, 1, 2, 3].map((n) => github.get({ n }))); return all.map((r) => [r.seq, r.args.n]); }",
      {
        answer: async (request) => {
          if (request.type === "call") await sleep(delays[request.seq] ?? 0);
          return echo(request);
        },
      },
    );
    expect(expectReturned(outcome)).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(outcome.requests.map((request) => (request as { seq: number }).seq)).toEqual([0, 1, 2, 3]);
  });

  it("R-RP-1: calls inside a step take seqs after the step's, and the step reports seqAfter", async () => {
    const outcome = await run(
      "async () => { const inner = await codemode.step('outer', async () => (await github.get({ inside: true })).seq); const next = await github.get({}); return [inner, next.seq]; }",
    );
    expect(expectReturned(outcome)).toEqual([1, 2]);
    expect(outcome.requests.slice(0, 2)).toEqual([
      { type: "call", seq: 1, connector: "github", method: "get", args: '{"inside":true}' },
      { type: "step", seq: 0, name: "outer", seqAfter: 2, value: "1" },
    ]);
  });

  it("R-RP-5: a step request records the value text, and the program sees that value decoded", async () => {
    const outcome = await run(
      "async () => { const value = await codemode.step('pick', () => ({ b: 1n, a: [new Uint8Array([3])] })); return [typeof value.b, value.a[0] instanceof Uint8Array]; }",
    );
    expect(expectReturned(outcome)).toEqual(["bigint", true]);
    expect(outcome.requests).toEqual([
      { type: "step", seq: 0, name: "pick", seqAfter: 1, value: encode({ b: 1n, a: [new Uint8Array([3])] }) },
    ]);
  });

  it("R-RP-5: a step whose fn throws records the error and rejects", async () => {
    const outcome = await run(
      "async () => { try { await codemode.step('fails', () => { throw new RangeError('nope'); }); } catch (error) { return error.message; } }",
    );
    expect(expectReturned(outcome)).toBe("RangeError: nope");
    expect(outcome.requests).toEqual([{ type: "step", seq: 0, name: "fails", seqAfter: 1, error: "RangeError: nope" }]);
  });

  it("R-RP-5: a step that returns undefined records empty value text", async () => {
    const outcome = await run("async () => { await codemode.step('nothing', () => {}); }");
    expect(outcome.requests).toEqual([{ type: "step", seq: 0, name: "nothing", seqAfter: 1, value: "" }]);
  });

  it("R-RP-5: codemode.step checks its arguments", async () => {
    const value = expectReturned(
      await run(
        "async () => { const out = []; for (const args of [[], [''], ['x'], ['x', 1]]) { try { await codemode.step(...args); } catch (error) { out.push(error.name); } } return out; }",
      ),
    );
    expect(value).toEqual(["TypeError", "TypeError", "TypeError", "TypeError"]);
  });

  it("R-ST-2: recorded calls and steps replay inside the sandbox without asking the host", async () => {
    const replay: ReplayEntry[] = [
      {
        kind: "call",
        seq: 0,
        connector: "github",
        method: "get",
        canonicalArgs: valueCodec.canonical(encode({ b: 2, a: 1 })),
        outcome: "value",
        text: encode({ recorded: true, big: 5n }),
      },
      {
        kind: "call",
        seq: 1,
        connector: "github",
        method: "create_issue",
        canonicalArgs: valueCodec.canonical(encode({ title: "t" })),
        outcome: "error",
        text: "recorded failure",
      },
      { kind: "step", seq: 2, name: "stamp", seqAfter: 3, outcome: "value", text: "12345" },
      { kind: "call", seq: 3, connector: "github", method: "get", canonicalArgs: "", outcome: "value", text: "" },
    ];
    const outcome = await run(
      `async () => {
        const a = await github.get({ a: 1, b: 2 });
        let error;
        try { await github.create_issue({ title: 't' }); } catch (e) { error = e.message; }
        let ran = false;
        const stamp = await codemode.step('stamp', () => { ran = true; return 1; });
        const empty = await github.get();
        const live = await github.get({ n: 4 });
        return { a, error, stamp, ran, empty, liveSeq: live.seq };
      }`,
      { replay },
    );
    expect(expectReturned(outcome)).toEqual({
      a: { recorded: true, big: 5n },
      error: "recorded failure",
      stamp: 12345,
      ran: false,
      empty: undefined,
      liveSeq: 4,
    });
    expect(outcome.requests).toEqual([{ type: "call", seq: 4, connector: "github", method: "get", args: '{"n":4}' }]);
  });

  it("R-RP-2: a recorded call whose arguments differ in value goes to the host", async () => {
    const replay: ReplayEntry[] = [
      {
        kind: "call",
        seq: 0,
        connector: "github",
        method: "get",
        canonicalArgs: valueCodec.canonical(encode({ a: 1 })),
        outcome: "value",
        text: '"recorded"',
      },
    ];
    const outcome = await run("async () => (await github.get({ a: 2 })).seq", { replay });
    expect(expectReturned(outcome)).toBe(0);
    expect(outcome.requests).toEqual([{ type: "call", seq: 0, connector: "github", method: "get", args: '{"a":2}' }]);
  });

  it("R-RP-2: a recorded call of another method or connector goes to the host", async () => {
    const replay: ReplayEntry[] = [
      {
        kind: "call",
        seq: 0,
        connector: "github",
        method: "get",
        canonicalArgs: "{}",
        outcome: "value",
        text: '"recorded"',
      },
      {
        kind: "call",
        seq: 1,
        connector: "slack",
        method: "get",
        canonicalArgs: "{}",
        outcome: "value",
        text: '"recorded"',
      },
    ];
    const outcome = await run("async () => [await github.create_issue({}), await github.get({})]", { replay });
    expect(outcome.requests.map((request) => [request.type, (request as { seq: number }).seq])).toEqual([
      ["call", 0],
      ["call", 1],
    ]);
  });

  it("R-RP-2: key order of arguments does not matter for replay, nested values do", async () => {
    const replay: ReplayEntry[] = [
      {
        kind: "call",
        seq: 0,
        connector: "github",
        method: "get",
        canonicalArgs: valueCodec.canonical(encode({ filter: { state: "open", labels: ["a", "b"] }, repo: "r" })),
        outcome: "value",
        text: '"replayed"',
      },
      {
        kind: "call",
        seq: 1,
        connector: "github",
        method: "get",
        canonicalArgs: valueCodec.canonical(encode({ filter: { labels: ["a", "b"] } })),
        outcome: "value",
        text: '"replayed"',
      },
    ];
    const outcome = await run(
      "async () => [await github.get({ repo: 'r', filter: { labels: ['a', 'b'], state: 'open' } }), (await github.get({ filter: { labels: ['b', 'a'] } })).seq]",
      { replay },
    );
    expect(expectReturned(outcome)).toEqual(["replayed", 1]);
    expect(outcome.requests).toHaveLength(1);
  });

  it("R-RP-5: a recorded step replays without running fn and moves past its inner calls", async () => {
    const replay: ReplayEntry[] = [
      { kind: "step", seq: 0, name: "outer", seqAfter: 3, outcome: "value", text: encode({ cached: 1n }) },
    ];
    const outcome = await run(
      "async () => { let ran = false; const v = await codemode.step('outer', async () => { ran = true; await github.get({}); return 0; }); const next = await github.get({}); return { v, ran, next: next.seq }; }",
      { replay },
    );
    expect(expectReturned(outcome)).toEqual({ v: { cached: 1n }, ran: false, next: 3 });
    expect(outcome.requests).toEqual([{ type: "call", seq: 3, connector: "github", method: "get", args: "{}" }]);
  });

  it("R-RP-5: a recorded step error replays as a rejection without running fn", async () => {
    const replay: ReplayEntry[] = [
      { kind: "step", seq: 0, name: "s", seqAfter: 1, outcome: "error", text: "Error: recorded" },
    ];
    const outcome = await run(
      "async () => { let ran = false; try { await codemode.step('s', () => { ran = true; }); } catch (error) { return [error.message, ran]; } }",
      { replay },
    );
    expect(expectReturned(outcome)).toEqual(["Error: recorded", false]);
    expect(outcome.requests).toEqual([]);
  });

  it("R-RP-5: a step with another name at a recorded seq runs fn and asks the host", async () => {
    const replay: ReplayEntry[] = [
      { kind: "step", seq: 0, name: "old-name", seqAfter: 1, outcome: "value", text: "1" },
    ];
    const outcome = await run("async () => codemode.step('new-name', () => 2)", { replay });
    expect(expectReturned(outcome)).toBe(2);
    expect(outcome.requests).toEqual([{ type: "step", seq: 0, name: "new-name", seqAfter: 1, value: "2" }]);
  });
});

describe("halts and calls left running", () => {
  it("R-RP-6: a halt reply ends the pass as halted", async () => {
    const outcome = await run("async () => { await github.get({}); return 'not reached'; }", {
      answer: () => ({ kind: "halt" }),
    });
    expect(outcome.result).toEqual({ status: "halted", logs: [] });
  });

  it("R-RP-6: a program that ignores the halted call and goes on sends the host nothing more", async () => {
    const outcome = await run(
      `async () => {
        github.create_issue({ title: 'needs approval' });
        for (let i = 0; i < 20; i++) {
          await new Promise((resolve) => setTimeout(resolve, 2));
          github.get({ i }).catch(() => {});
          await codemode.step('s' + i, () => i).catch(() => {});
        }
        return 'went on';
      }`,
      {
        answer: (request) =>
          request.type === "call" && request.method === "create_issue" ? { kind: "halt" } : echo(request),
      },
    );
    expect(outcome.result.status).toBe("halted");
    await sleep(100);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "create_issue", args: '{"title":"needs approval"}' },
    ]);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-RP-6: a halt decides the pass even when the program returns before the host answers", async () => {
    const outcome = await run("async () => { github.create_issue({}).catch(() => {}); return 'returned first'; }", {
      answer: async () => {
        await sleep(30);
        return { kind: "halt" };
      },
    });
    expect(outcome.result.status).toBe("halted");
  });

  it("R-RP-6: a halt in Promise.all drops the other replies", async () => {
    const outcome = await run(
      "async () => { const all = await Promise.all([github.get({ n: 0 }), github.create_issue({ n: 1 })]); return all; }",
      {
        answer: async (request) => {
          if (request.type === "call" && request.method === "create_issue") return { kind: "halt" };
          await sleep(30);
          return echo(request);
        },
      },
    );
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toHaveLength(2);
  });

  it("R-RP-7: calls started and not awaited still reach the host, and the pass waits for them", async () => {
    const finished: number[] = [];
    const outcome = await run(
      "async () => { github.get({ a: 1 }); github.create_issue({ b: 2 }); return 'returned early'; }",
      {
        answer: async (request) => {
          await sleep(60);
          if (request.type === "call") finished.push(request.seq);
          return echo(request);
        },
      },
    );
    expect(expectReturned(outcome)).toBe("returned early");
    expect(outcome.requests.map((request) => (request as { seq: number }).seq)).toEqual([0, 1]);
    expect(finished.sort()).toEqual([0, 1]);
  });

  it("R-RP-7: a started call the host never finishes ends the pass at the time limit", async () => {
    const error = expectFailed(
      await run("async () => { github.get({}); return 1; }", {
        timeoutMs: 300,
        answer: () => new Promise<HostReply>(() => {}),
      }),
      "TIMEOUT",
    );
    expect(error).toContain("still running");
  });
});

describe("timers within a pass", () => {
  it("R-SB-1: setTimeout, setInterval, clear* and queueMicrotask work and take no seq", async () => {
    const outcome = await run(
      `async () => {
        const order = [];
        setTimeout(() => order.push('later'), 30);
        setTimeout((label) => order.push(label), 0, 'soon');
        const cancelled = setTimeout(() => order.push('cancelled'), 5);
        clearTimeout(cancelled);
        let ticks = 0;
        await new Promise((resolve) => { const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 5); });
        queueMicrotask(() => order.push('microtask'));
        await new Promise((resolve) => setTimeout(resolve, 60));
        const call = await github.get({});
        return { order, ticks, seq: call.seq };
      }`,
    );
    const value = expectReturned(outcome) as { order: string[]; ticks: number; seq: number };
    expect([...value.order].sort()).toEqual(["later", "microtask", "soon"]);
    expect(value.order.indexOf("soon")).toBeLessThan(value.order.indexOf("later"));
    expect(value.ticks).toBe(3);
    expect(value.seq).toBe(0);
    expect(outcome.requests).toHaveLength(1);
  });
});
