/**
 * R-SB-3: nothing the model's code does can hang the host. These inputs reach code that runs on
 * the host thread, outside the sandbox's timeout (code normalization, search tokenization);
 * each once took minutes at these sizes. The per-test timeout is the hang guard.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { afterAll, describe, expect, it } from "vitest";

const runtime = createCodemodeRuntime({ limits: { timeoutMs: 5_000 } });
afterAll(() => runtime.close());

describe("host-side parsing of hostile input stays linear", () => {
  it("R-SB-3: an unterminated Markdown fence of 999,000 characters is a syntax error, not a stalled host", {
    timeout: 20_000,
  }, async () => {
    const fence = "```";
    const outcome = await runtime.execute({ code: `${fence}${"a".repeat(999_000)}` });
    expect(outcome).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
  });

  it("R-SB-3: an arrow head with a huge run of spaces before => is handled in linear time", {
    timeout: 20_000,
  }, async () => {
    const outcome = await runtime.execute({ code: `async (): ${" ".repeat(500_000)}x =>  { return 1 +; }` });
    expect(outcome).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
  });

  it("R-SB-3: codemode.search with a 500,000-letter upper-case query answers", { timeout: 20_000 }, async () => {
    const outcome = await runtime.execute({
      code: "async () => (await codemode.search('A'.repeat(500000))).results.length",
    });
    expect(outcome).toMatchObject({ status: "completed", result: 0 });
  });
});
