/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): rejections nobody handles, code that tries to
 * run after the pass, and programs that try to leave the function they run in.
 */
import { describe, expect, it } from "vitest";
import { echo, expectFailed, expectReturned, onQuickJs, sleep } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run, unhandledRejection } = hostileCorpus();

describe("unhandled rejections stay in the sandbox", () => {
  // isolated-vm fails the task in which a rejection goes unhandled: the first run of the program
  // fails the pass, a later one (code running on a host reply or timer) is dropped.
  it("R-SB-3: an unhandled rejection before the first await fails the pass with SANDBOX_ERROR", async () => {
    const outcome = await run("async () => { Promise.reject(new Error('nobody listens')); return 1; }");
    // QuickJS has no hook for rejections nobody handles (quickjs-emscripten exposes none): the
    // rejection stays in the sandbox, as it does after the first await with isolated-vm.
    if (onQuickJs) expect(outcome.result).toMatchObject({ status: "returned", value: "1" });
    else expectFailed(outcome, "SANDBOX_ERROR", "nobody listens");
  });

  it("R-SB-3: an unhandled rejection after an await does not reach the host process", async () => {
    const outcome = await run(
      "async () => { await github.get({}); Promise.reject(new Error('later')); await new Promise((r) => setTimeout(r, 10)); return 1; }",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: "1" });
  });

  it("R-SB-3: a rejected connector call left unawaited does not reach the host process", async () => {
    const outcome = await run(
      "async () => { github.get({}); await new Promise((r) => setTimeout(r, 20)); return 'done'; }",
      { answer: () => ({ kind: "error", message: "rejected later" }) },
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: '"done"' });
  });

  it("R-SB-3: a timer callback that throws does not reach the host process", async () => {
    const outcome = await run(
      "async () => { setTimeout(() => { throw new Error('timer threw'); }, 0); setTimeout(() => Promise.reject(new Error('timer rejected')), 0); await new Promise((r) => setTimeout(r, 30)); return 1; }",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: "1" });
  });

  it("R-SB-3: thrown non-errors (symbol, null, a Proxy) are a SANDBOX_ERROR", async () => {
    for (const thrown of [
      "Symbol('s')",
      "null",
      "new Proxy({}, { getPrototypeOf() { throw 1; }, get() { throw 2; } })",
      "Object.create(Error.prototype, { message: { get() { throw 3; } } })",
    ]) {
      expectFailed(await run(`async () => { throw ${thrown}; }`), "PROGRAM_ERROR");
    }
  });
});

describe("nothing runs after the pass", () => {
  it("R-SB-1: a setTimeout set to fire after the program returns never reaches the host", async () => {
    const outcome = await run(
      "async () => { setTimeout(() => github.create_issue({ late: true }), 30); return 'returned'; }",
    );
    expect(expectReturned(outcome)).toBe("returned");
    await sleep(150);
    expect(outcome.requests).toEqual([]);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-SB-1: a setInterval calling a connector stops with the pass", async () => {
    const outcome = await run(
      "async () => { setInterval(() => github.get({ tick: true }), 5); await new Promise((r) => setTimeout(r, 30)); return 'returned'; }",
    );
    expect(expectReturned(outcome)).toBe("returned");
    const during = outcome.requests.length;
    await sleep(150);
    expect(outcome.requests.length).toBe(during);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-RP-7: a continuation of an unawaited call cannot start a call after the pass", async () => {
    const outcome = await run(
      "async () => { github.get({ first: true }).then(() => github.create_issue({ second: true })); return 'returned'; }",
      {
        answer: async (request) => {
          await sleep(30);
          return echo(request);
        },
      },
    );
    expect(expectReturned(outcome)).toBe("returned");
    await sleep(150);
    expect(outcome.lateRequests()).toBe(0);
    expect(outcome.requests[0]).toEqual({
      type: "call",
      seq: 0,
      connector: "github",
      method: "get",
      args: '{"first":true}',
    });
  });

  it("R-RP-6: after a halt, timers and continuations of the program reach the host no more", async () => {
    const outcome = await run(
      "async () => { setInterval(() => github.get({ tick: true }).catch(() => {}), 2); await github.create_issue({ needs: 'approval' }); return 'not reached'; }",
      {
        answer: (request) =>
          request.type === "call" && request.method === "create_issue" ? { kind: "halt" } : echo(request),
      },
    );
    expect(outcome.result.status).toBe("halted");
    const during = outcome.requests.length;
    await sleep(100);
    expect(outcome.requests.length).toBe(during);
    expect(outcome.lateRequests()).toBe(0);
  });
});

describe("the program cannot leave its function (R-SB-2)", () => {
  it("R-SB-2: code closing the wrapper function directly is a SYNTAX_ERROR", async () => {
    expectFailed(await run('}); (() => "R1")(async () => {'), "SYNTAX_ERROR");
  });

  it("R-SB-2: module-only grammar cannot close the wrapper through an HTML-like comment", async () => {
    // Parsed as a module this is one template literal; as the script the executor compiles, `<!--`
    // would start a comment and the next line would close the function and forge the result text.
    const outcome = await run('export default 1;\nx = a <!--b[`\n}); (() => "Rnot wire text")(async () => {\n//`];');
    expectFailed(outcome, "SYNTAX_ERROR");
  });

  it("R-SB-2: calling the start hook again or replacing it changes nothing", async () => {
    const outcome = await run(
      "async () => { const before = typeof __codemode_start; globalThis.__codemode_start = () => 'forged'; return before; }",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: '"undefined"' });
  });
});

describe("the host process", () => {
  // Every file of the corpus also checks this after each of its tests (see hostileCorpus).
  it("R-SB-3: never saw an unhandledRejection while the whole corpus ran", () => {
    expect(unhandledRejection).not.toHaveBeenCalled();
  });
});
