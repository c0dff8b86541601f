import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";

const created: unknown[] = [];
const github = defineConnector({
  name: "github",
  instructions: "Use for GitHub issues and pull requests.",
  tools: {
    list_issues: {
      description: "List open issues of a repository.",
      inputSchema: {
        type: "object",
        properties: { repo: { type: "string", description: "owner/name" } },
        required: ["repo"],
        additionalProperties: false,
      },
      execute: async (args: { repo: string }) => [{ number: 1, title: `first of ${args.repo}` }],
    },
    create_issue: {
      description: "Create an issue in a repository.",
      inputSchema: z.object({
        repo: z.string(),
        title: z.string().min(3),
        labels: z.array(z.enum(["bug", "feature"])).default([]),
      }),
      requiresApproval: true,
      execute: async (args: unknown) => {
        created.push(args);
        return { number: 100 + created.length };
      },
    },
  },
});
const runtime = createCodemodeRuntime({ connectors: [github], limits: { timeoutMs: 5_000 } });
afterAll(() => runtime.close());

function completed(outcome: Outcome): unknown {
  if (outcome.status !== "completed")
    throw new Error(`expected completed, got ${JSON.stringify(outcome).slice(0, 400)}`);
  return outcome.result;
}

describe("discovery", () => {
  it("R-SN-3: codemode.search ranks the method a model asks for first, with its approval flag", async () => {
    const result = completed(await runtime.execute({ code: `async () => codemode.search("open a new issue")` })) as {
      results: Array<{ kind: string; path: string; requiresApproval: boolean }>;
    };
    expect(result.results[0]).toMatchObject({ kind: "method", path: "github.create_issue", requiresApproval: true });
  });

  it("R-SN-3: codemode.describe returns a TypeScript declaration generated from the schema, and runtime.describe the same", async () => {
    const inSandbox = completed(
      await runtime.execute({ code: `async () => codemode.describe("github.list_issues")` }),
    ) as { declaration: string };
    expect(inSandbox.declaration).toContain("list_issues(args: {");
    expect(inSandbox.declaration).toContain("/** owner/name */");
    expect(inSandbox.declaration).toContain("repo: string;");
    expect(await runtime.describe("github.list_issues")).toEqual(inSandbox);
    const missing = completed(await runtime.execute({ code: `async () => codemode.describe("github.nope")` }));
    expect(missing).toEqual({ error: expect.stringContaining("codemode.search") });
  });

  it("R-RP-1: search and describe take no seq: the first connector call after them is seq 0", async () => {
    const outcome = await runtime.execute({
      code: `async () => { await codemode.search("issues"); await codemode.describe("github"); return github.list_issues({ repo: "acme/web" }); }`,
    });
    completed(outcome);
    expect(outcome.calls?.map((call) => [call.seq, call.method])).toEqual([[0, "list_issues"]]);
  });

  it("R-CON-2: a JSON Schema mismatch rejects the call inside the sandbox naming the field, and execute never runs", async () => {
    const message = completed(
      await runtime.execute({
        code: `async () => { try { await github.list_issues({ repo: 7, extra: true }); return "ran"; } catch (error) { return error.message; } }`,
      }),
    ) as string;
    expect(message).toContain("github.list_issues");
    expect(message).toContain("args.repo: expected string");
    expect(message).toContain("args.extra: property not allowed");
  });

  it("R-CON-2: a zod mismatch on a gated tool rejects before any pause; a valid call pauses with the parsed arguments", async () => {
    const rejected = completed(
      await runtime.execute({
        code: `async () => { try { await github.create_issue({ repo: "a/b", title: "x" }); } catch (error) { return error.message; } }`,
      }),
    ) as string;
    expect(rejected).toContain("title");
    const paused = await runtime.execute({
      code: `async () => github.create_issue({ repo: "a/b", title: "Crash on save" })`,
    });
    expect(paused.status).toBe("paused");
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(completed(done)).toEqual({ number: 100 + created.length });
    // zod's default filled in labels before execute ran.
    expect(created.at(-1)).toEqual({ repo: "a/b", title: "Crash on save", labels: [] });
  });

  it("R-AI-2: the model description lists connectors and explains search, describe, step, pauses and calls issued together, in under 400 tokens", () => {
    const text = runtime.modelDescription();
    for (const phrase of [
      "- github (Use for GitHub issues…): ",
      "codemode.search",
      "codemode.describe",
      "codemode.step",
      "paused",
      "do not re-issue",
      "Promise.allSettled",
      "a denial rejects only its own call",
      "codemode.run",
    ]) {
      expect(text).toContain(phrase);
    }
    const tokens = countTokens(text);
    console.log(`model description: ${text.length} characters, ${tokens} tokens (o200k_base)`);
    expect(tokens).toBeLessThan(400);
  });
});
