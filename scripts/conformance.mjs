// `npm run test:conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in the root package.json) against `codemode-mcp --http` (run after `npm run build`).
//
// Every applicable scenario gets a server of its own, in-memory and on a free 127.0.0.1 port: the
// suite's client never closes its sessions, so a long-lived server would fill up with them.
// Every scenario the suite lists must be in APPLICABLE or in NOT_APPLICABLE, so that a scenario a
// new suite version adds is looked at, not silently skipped.
//
// `--verbose` prints the suite's output for passing scenarios too (it is always printed on failure).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stripVTControlCharacters } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
const SERVER_BIN = join(ROOT, "packages/core/dist/mcp/bin.js");
const CORE_ENTRY = join(ROOT, "packages/core/dist/index.js");
const CONFORMANCE_BIN = join(ROOT, "node_modules/.bin/conformance");
/** How long a server may take to say where it serves. */
const SERVER_START_TIMEOUT_MS = 30_000;
/** How long a server may take to exit after SIGTERM before it is killed. */
const SERVER_STOP_TIMEOUT_MS = 5_000;
/** How long one scenario may run before it counts as hung (the slowest takes about 1 s). */
const SCENARIO_TIMEOUT_MS = 60_000;

/** Scenarios every tools-only MCP server must pass over Streamable HTTP. */
const APPLICABLE = [
  "server-initialize",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  // A 4xx for a foreign Host/Origin, a 2xx for the URL's own: needs a localhost URL, as here.
  "dns-rebinding-protection",
  // Needs the `logging` capability and `logging/setLevel` answering {}.
  "logging-set-level",
];

/**
 * Scenarios that test what a tools-only server does not have: fixtures of the suite's reference
 * ("everything") server, called by their exact names, or capabilities codemode-mcp does not declare.
 */
const NOT_APPLICABLE = {
  "completion-complete": "completions: completion/complete on the reference prompt test_prompt_with_arguments",
  "tools-call-simple-text": "calls the reference server's test_simple_text tool",
  "tools-call-image": "calls the reference server's test_image_content tool",
  "tools-call-audio": "calls the reference server's test_audio_content tool",
  "tools-call-embedded-resource": "calls the reference server's test_embedded_resource tool",
  "tools-call-mixed-content": "calls the reference server's test_multiple_content_types tool",
  "tools-call-with-logging": "calls the reference server's test_tool_with_logging tool",
  "tools-call-error": "calls the reference server's test_error_handling tool",
  "tools-call-with-progress": "calls the reference server's test_tool_with_progress tool",
  "tools-call-sampling": "calls the reference server's test_sampling tool",
  "tools-call-elicitation": "calls the reference server's test_elicitation tool",
  "json-schema-2020-12": "looks for the reference server's json_schema_2020_12_tool in tools/list (pending)",
  "elicitation-sep1034-defaults": "calls the reference server's test_elicitation_sep1034_defaults tool",
  "elicitation-sep1330-enums": "calls the reference server's test_elicitation_sep1330_enums tool",
  "server-sse-polling": "calls the reference server's test_reconnection tool (pending; its checks only warn)",
  "resources-list": "resources: resources/list",
  "resources-read-text": "resources: reads the reference resource test://static-text",
  "resources-read-binary": "resources: reads the reference resource test://static-binary",
  "resources-templates-read": "resources: reads the reference template test://template/{id}/data",
  "resources-subscribe": "resources: subscribes to the reference resource test://watched-resource",
  "resources-unsubscribe": "resources: unsubscribes from the reference resource test://watched-resource",
  "prompts-list": "prompts: prompts/list",
  "prompts-get-simple": "prompts: gets the reference prompt test_simple_prompt",
  "prompts-get-with-args": "prompts: gets the reference prompt test_prompt_with_arguments",
  "prompts-get-embedded-resource": "prompts: gets the reference prompt test_prompt_with_embedded_resource",
  "prompts-get-with-image": "prompts: gets the reference prompt test_prompt_with_image",
};

/** The server's config: one read-only tool, and no `storage`, so executions stay in memory. */
const CONFIG = `import { createCodemodeRuntime, defineConnector } from ${JSON.stringify(pathToFileURL(CORE_ENTRY).href)};

const echo = defineConnector({
  name: "echo",
  tools: {
    say: { readOnly: true, description: "Echoes the text back", execute: async ({ text }) => ({ text: String(text) }) },
  },
});

export default () => createCodemodeRuntime({ connectors: [echo] });
`;

/** Child processes still running, killed if this script ends early. */
const running = new Set();
/** The folder of the server's config file, removed when this script ends. */
let configDir;

async function main(argv) {
  const verbose = argv.includes("--verbose");
  for (const file of [SERVER_BIN, CONFORMANCE_BIN]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm ci and npm run build first`);
  }
  const unclassified = await checkScenarioLists();
  if (unclassified.length > 0) {
    for (const problem of unclassified) console.error(`conformance: ${problem}`);
    console.error("conformance: put each scenario in APPLICABLE or NOT_APPLICABLE in scripts/conformance.mjs");
    return 1;
  }

  configDir = mkdtempSync(join(tmpdir(), "codemode-conformance-"));
  const configFile = join(configDir, "codemode.config.mjs");
  writeFileSync(configFile, CONFIG);
  const started = performance.now();
  let failed = 0;
  for (const scenario of APPLICABLE) {
    const scenarioStarted = performance.now();
    const result = await runScenarioOnFreshServer(scenario, configFile);
    const time = seconds(performance.now() - scenarioStarted);
    if (!result.passed) failed++;
    console.log(`${result.passed ? "PASS" : "FAIL"}  ${scenario.padEnd(28)} ${result.summary.padEnd(40)} ${time}`);
    if (!result.passed || verbose) console.log(indent(result.output));
  }
  const passed = APPLICABLE.length - failed;
  console.log(`${passed} of ${APPLICABLE.length} scenarios passed in ${seconds(performance.now() - started)}`);
  return failed === 0 ? 0 : 1;
}

/**
 * Compares `conformance list --server` with APPLICABLE and NOT_APPLICABLE; answers one line per
 * scenario in neither list, and per listed scenario the suite no longer has.
 */
async function checkScenarioLists() {
  const { code, output } = await run(process.execPath, [CONFORMANCE_BIN, "list", "--server"], SCENARIO_TIMEOUT_MS);
  if (code !== 0) throw new Error(`conformance list --server exited with ${code}:\n${output}`);
  // Lines look like "  - tools-list [2025-06-18,2025-11-25]".
  const listed = [...stripVTControlCharacters(output).matchAll(/^\s*- (\S+)/gm)].map((match) => match[1]);
  if (listed.length === 0) throw new Error(`conformance list --server listed no scenarios:\n${output}`);
  const known = new Set([...APPLICABLE, ...Object.keys(NOT_APPLICABLE)]);
  const problems = listed
    .filter((name) => !known.has(name))
    .map((name) => `the suite has a scenario this script does not know: ${name}`);
  for (const name of known) {
    if (!listed.includes(name)) problems.push(`the suite no longer has the scenario ${name}`);
  }
  return problems;
}

/** Starts a server, runs one scenario against it, stops the server: always, whatever happened. */
async function runScenarioOnFreshServer(scenario, configFile) {
  let server;
  try {
    server = await startServer(configFile);
    const args = [CONFORMANCE_BIN, "server", "--url", server.url, "--scenario", scenario];
    const { code, output } = await run(process.execPath, args, SCENARIO_TIMEOUT_MS);
    const passed = code === 0;
    const checks = stripVTControlCharacters(output).match(/^Passed: (.*)$/m)?.[1];
    const summary = checks ? `checks ${checks}` : `exit code ${code}`;
    const serverLog = passed ? "" : `\n--- codemode-mcp stderr ---\n${server.stderr()}`;
    return { passed, summary, output: output + serverLog };
  } catch (error) {
    return { passed: false, summary: "error", output: error instanceof Error ? error.message : String(error) };
  } finally {
    if (server) await stopProcess(server.child);
  }
}

/**
 * Starts `codemode-mcp --http 0` (the listener takes a free port, so two runs never race for one)
 * and answers its URL once it answers HTTP requests.
 */
async function startServer(configFile) {
  const child = spawn(process.execPath, [SERVER_BIN, "--config", configFile, "--http", "0"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let stderr = "";
  child.stderr.setEncoding("utf8");
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`codemode-mcp did not start in ${SERVER_START_TIMEOUT_MS} ms:\n${stderr}`)),
      SERVER_START_TIMEOUT_MS,
    );
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const served = stderr.match(/codemode-mcp: serving (http:\/\/\S+)/);
      if (served) {
        clearTimeout(timer);
        resolve(served[1]);
      }
    });
    // "close", not "exit": by then stderr has been read to its end, the reason included.
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`codemode-mcp exited (${signal ?? code}) before serving:\n${stderr}`));
    });
  }).catch(async (error) => {
    await stopProcess(child);
    throw error;
  });
  const server = { child, url, stderr: () => stderr };
  await waitUntilAnswering(server);
  return server;
}

/** Any HTTP status (a GET with no session is a 4xx) means the endpoint answers. */
async function waitUntilAnswering(server) {
  const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
  for (;;) {
    try {
      const response = await fetch(server.url, { signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        await stopProcess(server.child);
        throw new Error(`${server.url} did not answer: ${error}\n${server.stderr()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** SIGTERM (the server closes its sessions and runtime), then SIGKILL if it does not exit in time. */
async function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), SERVER_STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** Runs a command to its end and answers its exit code and its stdout and stderr, interleaved. */
function run(command, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => {
      output += `\n(killed after ${timeoutMs} ms)`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code: code ?? signal, output });
    });
  });
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function indent(text) {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

// Ctrl-C, a CI timeout, or a crash: no server outlives the script.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    console.error(`conformance: ${signal}, stopping`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  });
}
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
