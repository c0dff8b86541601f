// The official MCP Inspector, in CLI mode, against the Code Mode MCP server of this example: it
// lists the tools with their annotations (and execute's task support), then calls execute with a
// small program. `npm run example:mcp-inspector` (builds first). The Inspector comes from the npm
// registry through npx, pinned; it keeps no files of its own here.
//
// Exits 0 when both answers are what a client should see, 1 otherwise (CI runs it).
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
const bin = fileURLToPath(import.meta.resolve("@codemode/core/mcp").replace(/index\.js$/, "bin.js"));
const config = fileURLToPath(new URL("./codemode.config.ts", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "codemode-inspector-"));

/** One Inspector CLI run against a freshly launched `codemode-mcp`; its JSON answer. */
async function inspect(method: string[]): Promise<Record<string, unknown>> {
  const args = [
    "-y",
    INSPECTOR,
    "--cli",
    "--format",
    "json",
    ...method,
    "--",
    process.execPath,
    bin,
    "--config",
    config,
  ];
  const { stdout } = await promisify(execFile)("npx", args, {
    env: {
      ...process.env,
      MCP_CATALOG_PATH: join(scratch, "catalog.json"),
      MCP_CLIENT_CONFIG_PATH: join(scratch, "clients.json"),
    },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 180_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

type Tool = { name: string; annotations?: Record<string, unknown>; execution?: { taskSupport?: string } };

const listed = (await inspect(["--method", "tools/list"])) as { result?: { tools?: Tool[] } };
const tools = listed.result?.tools ?? [];
for (const tool of tools)
  console.log(
    `${tool.name}: ${JSON.stringify(tool.annotations ?? {})}${tool.execution ? ` ${JSON.stringify(tool.execution)}` : ""}`,
  );

const program = "async () => (await notes.list_notes({})).length";
const called = (await inspect([
  "--method",
  "tools/call",
  "--tool-name",
  "execute",
  "--tool-args-json",
  JSON.stringify({ code: program }),
])) as { result?: { structuredContent?: { status?: string; result?: unknown } } };
const outcome = called.result?.structuredContent;
console.log(`execute ${program} → ${JSON.stringify(outcome)}`);

const execute = tools.find((tool) => tool.name === "execute");
const ok =
  ["search", "describe", "execute"].every((name) => tools.some((tool) => tool.name === name)) &&
  execute?.annotations?.readOnlyHint === false &&
  tools.find((tool) => tool.name === "search")?.annotations?.readOnlyHint === true &&
  execute?.execution?.taskSupport === "optional" &&
  outcome?.status === "completed" &&
  typeof outcome.result === "number";
console.log(ok ? "the Inspector sees the tools and runs a program" : "unexpected answers from the Inspector");
process.exit(ok ? 0 : 1);
