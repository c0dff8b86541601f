// `npm run test:runtimes`: what a registry user gets on the runtimes other than Node 24 (run after
// `npm run build`).
//
// 1. `npm pack` of core, storage and cli; an empty project installs the tarballs with Node 24's
//    npm and nothing else. isolated-vm is an optional peer of core, so it must not be installed.
// 2. On Node 22, Bun and Deno (fetched by scripts/fetch-runtime.sh): the quickstart with no
//    executor option, so the runtime picks QuickJS itself and says so once on stderr. Where the
//    runtime has `node:sqlite`, process A pauses on a SQLite file and exits, and process B, the
//    `codemode approve` CLI on the same runtime, approves it; elsewhere a memory store, with the
//    approval in the same process.
//
// `--keep` keeps the temporary folder; `--only node22,bun,deno` checks some of the runtimes;
// `--memory` takes the memory path even where node:sqlite works.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const PACKAGES = ["core", "storage", "cli"];
const FALLBACK_WARNING = "[codemode] sandbox: QuickJS in WebAssembly, because isolated-vm does not load here (";
/** How long one process of a check may take before it counts as hung. */
const PROCESS_TIMEOUT_MS = 120_000;

/**
 * The runtimes checked: how to run a file with each, how each names itself (`runningOn` below),
 * and how it runs the `codemode` bin. Node 22 runs it as an operator's `npx codemode` does,
 * through node_modules/.bin, whose `#!/usr/bin/env node` finds Node 22 first on PATH; Bun's and
 * Deno's package runners would follow that line to another Node, so they run the bin's file.
 */
const RUNTIMES = [
  {
    id: "node22",
    name: "Node 22",
    calls: "Node v22.",
    runArgs: (file) => [file],
    cliCommand: "node_modules/.bin/codemode",
  },
  { id: "bun", name: "Bun", calls: "Bun ", runArgs: (file) => [file] },
  {
    id: "deno",
    name: "Deno",
    calls: "Deno ",
    // `manual`: use the node_modules npm installed, do not touch it.
    runArgs: (file) => ["run", "-A", "--node-modules-dir=manual", file],
  },
];
const CLI_FILE = "node_modules/@codemode/cli/dist/bin.js";

/** The quickstart's connector, shared by every process of a check. */
const SHOP = `// The quickstart's shop: a search anyone may run, and orders that need a human's approval.
import { defineConnector } from "@codemode/core";

export const orders = [];
export const shop = defineConnector({
  name: "shop",
  instructions: "Every order needs a human's approval.",
  tools: {
    search_products: {
      readOnly: true,
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      execute: async (args) => [{ sku: \`\${args.query}-1\`, price: 9 }],
    },
    create_order: {
      requiresApproval: true,
      inputSchema: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
        required: ["sku", "quantity"],
      },
      execute: async (args) => {
        orders.push(args);
        return { orderId: \`order-\${orders.length}\` };
      },
    },
  },
});

/** The runtime this process runs on, as "Bun 1.4.5", "Deno 2.9.6" or "Node v22.23.5". */
const versions = process.versions;
export const runningOn = versions.bun ? \`Bun \${versions.bun}\` : versions.deno ? \`Deno \${versions.deno}\` : \`Node \${process.version}\`;
console.error(\`[quickstart] runs on \${runningOn}\`);

export const PROGRAM = \`async () => {
  const [mug] = await shop.search_products({ query: "mug" });
  return shop.create_order({ sku: mug.sku, quantity: 2 });
}\`;
`;

/** Process A: runs the program until it pauses, prints the outcome as one JSON line, exits. */
const PAUSE = `import { createCodemodeRuntime } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { PROGRAM, shop } from "./shop.mjs";

const storage = sqliteStorage(process.env.QUICKSTART_DB);
const runtime = createCodemodeRuntime({ name: "quickstart", connectors: [shop], storage });
const outcome = await runtime.execute({ code: PROGRAM });
await runtime.close();
await storage.close();
console.log(JSON.stringify(outcome));
`;

/** Process B's config: the \`codemode\` CLI loads the same runtime on the same file. */
const CONFIG = `import { createCodemodeRuntime } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { shop } from "./shop.mjs";

const storage = sqliteStorage(process.env.QUICKSTART_DB);
export default createCodemodeRuntime({ name: "quickstart", connectors: [shop], storage });
export const close = () => storage.close();
`;

/** Without node:sqlite: pause and approve in one process on a memory store. */
const IN_MEMORY = `import { createCodemodeRuntime } from "@codemode/core";
import { memoryStorage } from "@codemode/storage/memory";
import { PROGRAM, shop } from "./shop.mjs";

const storage = memoryStorage();
const runtime = createCodemodeRuntime({ name: "quickstart", connectors: [shop], storage });
const paused = await runtime.execute({ code: PROGRAM });
console.log(JSON.stringify(paused));
if (paused.status === "paused") console.log(JSON.stringify(await runtime.approve({ executionId: paused.executionId, by: "ann" })));
await runtime.close();
await storage.close();
`;

/** Exits 0 when the runtime has a working node:sqlite. */
const SQLITE_PROBE = `import { DatabaseSync } from "node:sqlite";
new DatabaseSync(":memory:").prepare("SELECT 1").get();
`;

const work = mkdtempSync(join(tmpdir(), "codemode-runtimes-"));
const keep = process.argv.includes("--keep");
const onlyIndex = process.argv.indexOf("--only");
const forceMemory = process.argv.includes("--memory");
const only = onlyIndex > 0 ? process.argv[onlyIndex + 1]?.split(",") : undefined;
const step = (text) => console.log(`\n== ${text}`);
const started = Date.now();
const problems = [];

try {
  const project = installProject();
  for (const runtime of RUNTIMES.filter((candidate) => !only || only.includes(candidate.id))) {
    step(runtime.name);
    try {
      checkRuntime(runtime, project);
    } catch (error) {
      problems.push(`${runtime.name}: ${error.message}`);
      console.log(`FAILED: ${error.message}`);
    }
  }
} finally {
  if (keep) console.log(`\nkept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length > 0) {
  console.error(
    `\n${problems.length} problem(s) in ${seconds} s:\n${problems.map((problem) => `- ${problem}`).join("\n")}`,
  );
  process.exit(1);
}
console.log(`\nthe packed packages run the quickstart on every runtime (${seconds} s)`);

/** Packs core, storage and cli, and installs them into an empty project, as a stranger would. */
function installProject() {
  step("npm pack");
  const tarballs = PACKAGES.map((name) => {
    const output = execFileSync("npm", ["pack", "--json", "--pack-destination", work, "-w", `packages/${name}`], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [packed] = JSON.parse(output);
    console.log(`${packed.filename}: ${packed.files.length} files, ${packed.size} bytes`);
    return join(work, packed.filename);
  });

  step("install into an empty project, without isolated-vm");
  const project = join(work, "stranger");
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "stranger", private: true, type: "module" }, null, 2)}\n`,
  );
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs], {
    cwd: project,
    stdio: "inherit",
  });
  let isolatedVm;
  try {
    isolatedVm = readFileSync(join(project, "node_modules/isolated-vm/package.json"), "utf8");
  } catch {
    console.log("node_modules/isolated-vm: absent, as it should be");
  }
  if (isolatedVm !== undefined) throw new Error("npm installed isolated-vm, an optional peer, into the fresh project");

  writeFileSync(join(project, "shop.mjs"), SHOP);
  writeFileSync(join(project, "pause.mjs"), PAUSE);
  writeFileSync(join(project, "codemode.config.mjs"), CONFIG);
  writeFileSync(join(project, "in-memory.mjs"), IN_MEMORY);
  writeFileSync(join(project, "sqlite-probe.mjs"), SQLITE_PROBE);
  return project;
}

/** The quickstart on one runtime: throws with what went wrong. */
function checkRuntime(runtime, project) {
  const binary = execFileSync(join(ROOT, "scripts/fetch-runtime.sh"), [runtime.id], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).split("\n", 1)[0];
  console.log(`version: ${version}`);
  const onPath = { PATH: `${dirname(binary)}${delimiter}${process.env.PATH}` };
  const run = (file, args = [], env = {}) =>
    runWith(binary, [...runtime.runArgs(file), ...args], project, { ...onPath, ...env });

  const probe = run("sqlite-probe.mjs");
  if (probe.status !== 0 || forceMemory) {
    const why = forceMemory ? "--memory" : `node:sqlite does not work: ${firstLine(probe.stderr)}`;
    console.log(`store: memory, approval in the same process (${why})`);
    const printed = run("in-memory.mjs");
    expectSuccess("in-memory.mjs", printed);
    expectRunningOn(runtime, printed.stderr, "in-memory.mjs");
    const [paused, done] = jsonLines(printed.stdout);
    expectPaused(paused);
    expectFallbackWarning(printed.stderr, "in-memory.mjs");
    expectCompleted(done);
    console.log(`result: ${done.status} ${JSON.stringify(done.result)}`);
    return;
  }

  console.log("store: SQLite file; process A pauses, process B (`codemode approve`) approves");
  const env = { QUICKSTART_DB: join(project, ".codemode", `${runtime.id}.sqlite`) };
  const first = run("pause.mjs", [], env);
  expectSuccess("process A (pause.mjs)", first);
  expectRunningOn(runtime, first.stderr, "process A");
  const [paused] = jsonLines(first.stdout);
  expectPaused(paused);
  expectFallbackWarning(first.stderr, "process A");
  const pending = paused.pending.map((action) => `${action.connector}.${action.method}`).join(", ");
  console.log(`process A: ${paused.status} at ${pending}, execution ${paused.executionId}`);

  const cliArgs = ["--config", "codemode.config.mjs", "approve", paused.executionId, "--by", "ann", "--json"];
  const second = runtime.cliCommand
    ? runWith(join(project, runtime.cliCommand), cliArgs, project, { ...onPath, ...env })
    : run(CLI_FILE, cliArgs, env);
  expectSuccess("process B (codemode approve)", second);
  expectRunningOn(runtime, second.stderr, "process B");
  expectFallbackWarning(second.stderr, "process B");
  // `--json` prints the outcome as one (indented) JSON document on stdout.
  const done = parseDocument(second.stdout, "process B");
  expectCompleted(done);
  console.log(`process B: codemode approve → ${done.status} ${JSON.stringify(done.result)}`);

  // A command that runs no program chooses no sandbox and says nothing about one, nor about node:sqlite.
  const listArgs = ["--config", "codemode.config.mjs", "executions", "--json"];
  const third = runtime.cliCommand
    ? runWith(join(project, runtime.cliCommand), listArgs, project, { ...onPath, ...env })
    : run(CLI_FILE, listArgs, env);
  expectSuccess("process C (codemode executions)", third);
  const noise = third.stderr
    .split("\n")
    .filter((line) => line.includes(FALLBACK_WARNING) || /ExperimentalWarning/.test(line));
  if (noise.length > 0)
    throw new Error(`process C (codemode executions) ran no program but said:\n${indent(noise.join("\n"))}`);
  console.log("process C: codemode executions, quiet");
}

/** Runs one process of a check, its output captured, in the project folder. */
function runWith(command, args, cwd, env) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    timeout: PROCESS_TIMEOUT_MS,
    // Nothing from the caller chooses the sandbox: the runtime must pick QuickJS by itself.
    env: { ...withoutExecutorChoice(process.env), NO_COLOR: "1", ...env },
  });
  const commandLine = [command, ...args].join(" ");
  if (result.error) throw new Error(`${commandLine}: ${result.error.message}`);
  return { ...result, command: commandLine };
}

function withoutExecutorChoice(env) {
  const { CODEMODE_EXECUTOR: _ignored, ...rest } = env;
  return rest;
}

function expectSuccess(what, result) {
  if (result.status === 0) return;
  const how = result.signal ? `was killed by ${result.signal}` : `exited ${result.status}`;
  throw new Error(`${what} ${how}\n  command: ${result.command}\n${indent(`${result.stdout}${result.stderr}`)}`);
}

/** The process ran on the runtime under test, not on a Node found elsewhere on PATH. */
function expectRunningOn(runtime, stderr, what) {
  const said = /\[quickstart\] runs on (.*)/.exec(stderr)?.[1] ?? "nothing";
  if (!said.startsWith(runtime.calls)) throw new Error(`${what} ran on ${said}, not on ${runtime.name}`);
  console.log(`${what} runs on ${said}`);
}

function expectFallbackWarning(stderr, what) {
  const lines = stderr.split("\n").filter((line) => line.includes(FALLBACK_WARNING));
  if (lines.length !== 1)
    throw new Error(
      `${what}: expected the QuickJS fallback warning once on stderr, saw it ${lines.length} times:\n${indent(stderr)}`,
    );
  console.log(`${what} warned: ${lines[0].trim()}`);
}

function expectPaused(outcome) {
  const pending = outcome?.pending ?? [];
  if (outcome?.status !== "paused" || pending.length !== 1 || pending[0].method !== "create_order")
    throw new Error(`expected a pause at shop.create_order, got ${JSON.stringify(outcome)}`);
}

function expectCompleted(outcome) {
  if (outcome?.status !== "completed" || outcome.result?.orderId !== "order-1")
    throw new Error(`expected completion with { orderId: "order-1" }, got ${JSON.stringify(outcome)}`);
}

/** The JSON values printed one per line; other lines (a runtime's own notices) are skipped. */
function jsonLines(stdout) {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

function parseDocument(stdout, what) {
  try {
    return JSON.parse(stdout);
  } catch {
    throw new Error(`${what} did not print a JSON document:\n${indent(stdout)}`);
  }
}

function firstLine(text) {
  return text.trim().split("\n", 1)[0] ?? "";
}

function indent(text) {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
