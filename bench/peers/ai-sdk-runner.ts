/**
 * The bench programs through @ai-sdk/code-mode, as its README's "Direct Execution" does: AI SDK
 * `tool()`s with zod input schemas and an `execute`, and each pass is one `runCodeMode` (a fresh
 * QuickJS context on a pooled worker thread of the `run` package).
 *
 * Two adaptations, both the least the library asks for:
 * - sandboxed code reaches tools as `tools.<name>`, and AI SDK tool names are flat, so
 *   `crm.getCustomer(…)` in a program is spelled `tools.crm_getCustomer(…)`;
 * - the library caps a run at 256 tool calls by default (`executionPolicy.maxBridgeRequests`),
 *   so the cap is raised to the calls of the longest program.
 */
import { readFileSync } from "node:fs";
import { type CodeModeToolSet, experimental_runCodeMode as runCodeMode } from "@ai-sdk/code-mode";
import { tool } from "ai";
import { z } from "zod";
import type { RunnerOptions } from "./runner.ts";
import { runPeer, toolsOf } from "./runner.ts";

const version = (name: string) =>
  (
    JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")) as {
      version: string;
    }
  ).version;
const options = JSON.parse(process.argv[2] ?? "{}") as RunnerOptions;
const schemaOf = { number: z.number(), string: z.string() };

await runPeer(
  {
    library: "@ai-sdk/code-mode",
    version: version("@ai-sdk/code-mode"),
    sandbox: `QuickJS in a worker thread, run ${version("run")}`,
  },
  async (program) => {
    let js = program.body;
    const tools: CodeModeToolSet = {};
    for (const [connector, method, inputs] of toolsOf(program)) {
      const name = `${connector}_${method}`;
      js = js.replaceAll(`${connector}.${method}(`, `tools.${name}(`);
      tools[name] = tool({
        description: `${connector}.${method}`,
        inputSchema: z.object(Object.fromEntries(Object.entries(inputs).map(([key, type]) => [key, schemaOf[type]]))),
        execute: async (input) => program.answer(connector, method, input),
      });
    }
    const executionPolicy = { maxBridgeRequests: Math.max(256, options.calls) };
    return async () => JSON.stringify(await runCodeMode({ js, tools, options: { executionPolicy } }));
  },
);
