import { createServer, type Server } from "node:http";
import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

function expectCompleted(outcome: Outcome): unknown {
  if (outcome.status !== "completed")
    throw new Error(`expected completed, got ${JSON.stringify(outcome).slice(0, 400)}`);
  return outcome.result;
}

function makeGithub(created: unknown[]) {
  return defineConnector({
    name: "github",
    tools: {
      list_issues: {
        description: "List open issues.",
        execute: async (args: { repo: string }) => [
          { number: 1, repo: args.repo },
          { number: 2, repo: args.repo },
        ],
      },
      create_issue: {
        description: "Create an issue.",
        requiresApproval: true,
        execute: async (args: { repo: string; title: string }) => {
          created.push(args);
          return { number: 100 + created.length };
        },
      },
    },
  });
}

const triageCode = `async () => {
  const issues = await github.list_issues({ repo: input?.repo ?? "acme/web" });
  const issue = await github.create_issue({ repo: input?.repo ?? "acme/web", title: "Triage " + issues.length });
  return issue.number;
}`;

describe("snippets", () => {
  it("R-SN-1 R-SN-3: saveSnippet keeps the code and connector list; search ranks it; describe shows its source", async () => {
    const runtime = createCodemodeRuntime({ connectors: [makeGithub([])] });
    const source = await runtime.execute({ code: triageCode });
    expect(source.status).toBe("paused");
    // Any status is accepted: checking it is the application's job.
    const snippet = await runtime.saveSnippet("triage-issues", {
      executionId: source.executionId,
      description: "Count open issues and file a triage issue.",
    });
    expect(snippet).toMatchObject({
      name: "triage-issues",
      code: triageCode,
      connectors: ["github"],
      executionId: source.executionId,
    });
    expect((await runtime.snippets()).map((saved) => saved.name)).toEqual(["triage-issues"]);
    const found = expectCompleted(
      await runtime.execute({ code: `async () => codemode.search("triage open issues")` }),
    ) as { results: Array<{ kind: string; path: string }> };
    expect(found.results[0]).toMatchObject({ kind: "snippet", path: "triage-issues" });
    const described = expectCompleted(
      await runtime.execute({ code: `async () => codemode.describe("triage-issues")` }),
    );
    expect(described).toMatchObject({
      kind: "snippet",
      source: triageCode,
      connectors: ["github"],
      description: "Count open issues and file a triage issue.",
    });
    expect(await runtime.saveSnippet("nothing", { executionId: "no-such-execution" })).toBeNull();
    expect(await runtime.deleteSnippet("triage-issues")).toBe(true);
    expect(await runtime.deleteSnippet("triage-issues")).toBe(false);
    await runtime.close();
  });

  it("R-SN-2: a snippet that hits an approval inside codemode.run pauses the outer execution, and approve completes it", async () => {
    const created: unknown[] = [];
    const runtime = createCodemodeRuntime({ connectors: [makeGithub(created)] });
    const source = await runtime.execute({ code: triageCode });
    await runtime.saveSnippet("triage-issues", { executionId: source.executionId });

    const outer = `async () => {
      const before = await github.list_issues({ repo: "acme/api" });
      const number = await codemode.run("triage-issues", { repo: "acme/api" });
      return { before: before.length, number };
    }`;
    const paused = await runtime.execute({ code: outer });
    expect(paused.status).toBe("paused");
    if (paused.status !== "paused") return;
    // The snippet's calls joined the outer log: seq 0 is the outer read, 1 and 2 the snippet's.
    expect(paused.pending).toEqual([
      {
        executionId: paused.executionId,
        seq: 2,
        pauseId: "2.1",
        connector: "github",
        method: "create_issue",
        args: { repo: "acme/api", title: "Triage 2" },
        description: "Create an issue.",
      },
    ]);
    expect(created).toEqual([]);

    const done = await runtime.approve({ executionId: paused.executionId, seq: 2 });
    expect(expectCompleted(done)).toEqual({ before: 2, number: 101 });
    expect(created).toEqual([{ repo: "acme/api", title: "Triage 2" }]);
    expect(done.calls?.map((call) => [call.seq, call.method, call.state])).toEqual([
      [0, "list_issues", "applied"],
      [1, "list_issues", "applied"],
      [2, "create_issue", "applied"],
    ]);
    await runtime.close();
  });

  it("R-SN-2: a missing snippet or a missing connector resolves to { error } naming it, without throwing", async () => {
    const created: unknown[] = [];
    const withGithub = createCodemodeRuntime({ connectors: [makeGithub(created)] });
    const source = await withGithub.execute({ code: triageCode });
    await withGithub.saveSnippet("triage-issues", { executionId: source.executionId });
    const missingSnippet = expectCompleted(
      await withGithub.execute({ code: `async () => codemode.run("no-such-snippet")` }),
    );
    expect(missingSnippet).toEqual({ error: expect.stringContaining('"no-such-snippet"') });

    // The same store, a runtime without the github connector.
    const empty = defineConnector({ name: "notes", tools: { add: { execute: async () => true } } });
    const { default: Keyv } = await import("keyv");
    const keyv = new Keyv();
    const first = createCodemodeRuntime({ connectors: [makeGithub([])], storage: keyv });
    const saved = await first.execute({ code: triageCode });
    await first.saveSnippet("triage-issues", { executionId: saved.executionId });
    const second = createCodemodeRuntime({ connectors: [empty], storage: keyv });
    const missingConnector = expectCompleted(
      await second.execute({ code: `async () => codemode.run("triage-issues")` }),
    );
    expect(missingConnector).toEqual({ error: expect.stringContaining("github") });
    await Promise.all([withGithub.close(), first.close(), second.close()]);
  });

  it("R-AP-5: approve checks the connectors a snippet used inside the run too, and leaves the run approvable", async () => {
    const { default: Keyv } = await import("keyv");
    const keyv = new Keyv();
    const slack = defineConnector({ name: "slack", tools: { post: { execute: () => ({ ok: true }) } } });
    const shop = defineConnector({ name: "shop", tools: { refund: { requiresApproval: true, execute: () => 1 } } });
    const full = createCodemodeRuntime({ connectors: [slack, shop], storage: keyv });
    const source = await full.execute({ code: "async () => slack.post({ text: input?.text ?? 'hi' })" });
    await full.saveSnippet("notify", { executionId: source.executionId });
    const paused = await full.execute({
      code: "async () => { await codemode.run('notify', { text: 'refunding' }); return shop.refund({ order: 7 }); }",
    });
    expect(paused.status).toBe("paused");
    const withoutSlack = createCodemodeRuntime({ connectors: [shop], storage: keyv });
    const refused = await withoutSlack.approve({ executionId: paused.executionId });
    expect(refused).toMatchObject({
      status: "error",
      code: "MISSING_CONNECTOR",
      error: expect.stringContaining("slack"),
    });
    expect((await full.execution(paused.executionId))?.status).toBe("paused");
    expect(expectCompleted(await full.approve({ executionId: paused.executionId }))).toBe(1);
    await Promise.all([full.close(), withoutSlack.close()]);
  });

  it("R-SN-2: snippets saved from every accepted code form run again", async () => {
    const runtime = createCodemodeRuntime({ connectors: [makeGithub([])] });
    const forms = {
      arrow: `async () => (await github.list_issues({ repo: input ?? "a/b" })).length`,
      body: `const issues = await github.list_issues({ repo: input ?? "a/b" });\nissues.length`,
      fence: '```ts\nconst issues: unknown[] = await github.list_issues({ repo: input ?? "a/b" });\nissues.length\n```',
      exported: `export default async function count() { return (await github.list_issues({ repo: input ?? "a/b" })).length; }`,
    };
    for (const [name, code] of Object.entries(forms)) {
      const source = await runtime.execute({ code });
      expect(expectCompleted(source)).toBe(2);
      await runtime.saveSnippet(name, { executionId: source.executionId });
      const rerun = await runtime.execute({ code: `async () => codemode.run(${JSON.stringify(name)}, "c/d")` });
      expect(expectCompleted(rerun)).toBe(2);
      expect(rerun.calls?.[0]?.args).toEqual({ repo: "c/d" });
    }
    await runtime.close();
  });
});

describe("network", () => {
  let server: Server;
  let url = "";
  let hits = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      hits++;
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ path: request.url, hit: hits }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("R-SB-5 R-DV-1: a response over the durable limit is refused with VALUE_TOO_LARGE, and the download stops there", async () => {
    let sent = 0;
    const big = createServer((_request, response) => {
      const chunk = "x".repeat(64 * 1024);
      const pump = () => {
        while (sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
        response.end();
      };
      response.on("close", () => undefined);
      pump();
    });
    await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
    const address = big.address();
    const bigUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/huge`;
    const runtime = createCodemodeRuntime({ connectors: [makeGithub([])], allowNetwork: true });
    const outcome = await runtime.execute({ code: `async () => (await fetch("${bigUrl}")).text()` });
    expect(outcome).toMatchObject({ status: "error", code: "VALUE_TOO_LARGE" });
    // The host stopped reading soon after the limit instead of downloading all 64 MB.
    expect(sent).toBeLessThan(32 * 1024 * 1024);
    await runtime.close();
    big.closeAllConnections();
    await new Promise<void>((resolve) => big.close(() => resolve()));
  });

  it("R-SB-5: without allowNetwork there is no fetch in the sandbox", async () => {
    const runtime = createCodemodeRuntime({ connectors: [makeGithub([])] });
    expect(expectCompleted(await runtime.execute({ code: `async () => typeof fetch` }))).toBe("undefined");
    await runtime.close();
  });

  it("R-SB-5: allowNetwork gives a host-run fetch, logged like a step, that does not repeat during replay", async () => {
    const runtime = createCodemodeRuntime({ connectors: [makeGithub([])], allowNetwork: true });
    const code = `async () => {
      const response = await fetch("${url}/status");
      const body = await response.json();
      await github.create_issue({ repo: "acme/web", title: "hit " + body.hit });
      return { ok: response.ok, type: response.headers.get("Content-Type"), body };
    }`;
    const before = hits;
    const paused = await runtime.execute({ code });
    expect(paused.status).toBe("paused");
    expect(hits).toBe(before + 1);
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(expectCompleted(done)).toEqual({
      ok: true,
      type: "application/json",
      body: { path: "/status", hit: before + 1 },
    });
    expect(hits).toBe(before + 1);
    expect(done.calls?.[0]).toMatchObject({ seq: 0, connector: "codemode", method: "fetch", state: "applied" });
    await runtime.close();
  });
});
