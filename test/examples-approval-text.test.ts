import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * What a person reads when an example asks for an approval: the action, never the
 * `[codemode execution … seq …]` marker the adapters read. Runs the example as `npm run
 * example:ai-sdk` does (the scripted model; stdin is not a terminal, so it approves and prints the
 * question). Imports the BUILT packages: run `npm run build` first.
 */

const AI_SDK_AGENT = fileURLToPath(new URL("../examples/ai-sdk-agent/main.ts", import.meta.url));

describe("the examples' approval prompts", () => {
  it("examples/ai-sdk-agent asks about the order in words, without the execution marker", {
    timeout: 120_000,
  }, async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    delete env.OPENAI_API_KEY;
    const { stdout } = await promisify(execFile)(process.execPath, [AI_SDK_AGENT], { env, timeout: 90_000 });
    const prompt = stdout.split("\n").find((line) => line.startsWith("Approve "));
    expect(prompt).toBe(
      'Approve shop.create_order({"sku":"mug-logo","quantity":2})? [y/N] y   (approved automatically: not a terminal)',
    );
    expect(stdout).not.toContain("[codemode execution");
    expect(stdout).toMatch(/#1 shop\.create_order applied \(approved by terminal user\)/);
  });
});
