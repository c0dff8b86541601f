/** The isolated-vm executor: halt replies, and calls a program started and left running. */
import { describe, expect, it } from "vitest";
import type { HostReply } from "../executor.js";
import { echo, expectFailed, expectReturned, isolatedVmExecutorForTests, sleep } from "../pass-fixtures.js";

const { run } = isolatedVmExecutorForTests();

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
