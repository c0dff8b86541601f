// `npm run test:quickjs`: the runtime's behaviour suites, the hostile-program corpus and the
// hardening suites again, with every runtime's sandbox QuickJS (`CODEMODE_EXECUTOR=quickjs`), on
// Node 24 (this node) and on Node 22 (fetched from the npm registry by scripts/fetch-runtime.sh),
// where the isolated-vm addon built for Node 24 does not load. The stores are memory and SQLite
// only: these runs vary the sandbox; `npm test` runs the same stories on all four stores.
//
//   node scripts/test-quickjs.mjs            # Node 24, then Node 22
//   node scripts/test-quickjs.mjs --only 22  # one of them
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

const ROOT = new URL("..", import.meta.url).pathname;
/**
 * Tests of isolated-vm's own machinery (its isolate pool, warm isolates, the stack its programs
 * get on a sandbox process's main thread): nothing of QuickJS's.
 */
const ISOLATED_VM_ONLY = new Set(
  ["dispose-at-once", "isolate-reuse", "prewarm", "sandbox-process-stack"].map((name) => `${name}.test.ts`),
);

/** The test files under a folder, but isolated-vm's own (the files are named: vitest's own excludes are per project). */
function testFilesUnder(folder) {
  return readdirSync(`${ROOT}${folder}`, { recursive: true })
    .filter((path) => path.endsWith(".test.ts") && !ISOLATED_VM_ONLY.has(path.split("/").at(-1)))
    .map((path) => `${folder}/${path}`)
    .sort();
}

const SUITES = [
  // The executor suites (the shared isolated-vm-executor-* and hostile-corpus-* files run on the
  // executor CODEMODE_EXECUTOR names) and the runtime's units.
  ...testFilesUnder("packages/core/src/sandbox"),
  ...testFilesUnder("packages/core/src/runtime"),
  // The behaviour suites.
  ...[
    "requirements",
    "replay",
    "replay-interrupted",
    "replay-steps",
    "replay-concurrent",
    "approvals",
    "approvals-reject",
    "approvals-concurrent",
    "approvals-outcomes",
    "durability",
    "durable-values",
    "lifecycle",
    "lifecycle-retention",
    "lifecycle-races",
    "lifecycle-races-expiry",
    "property",
    "rollback",
    "snippets",
    "read-only",
    "sandbox-threads",
    "replay-check",
    "rerun",
    "decide",
    "decide-denials",
    "decide-grants",
    "decide-refusals",
    "decide-no-store",
    "decide-no-store-passes",
    "cancel",
    "cancel-requests",
  ].map((name) => `test/${name}.test.ts`),
  // The hardening suites.
  ...["approvals", "determinism", "durable", "host", "quota", "exit"].map((name) => `test/hardening-${name}.test.ts`),
];
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const nodes = [
  { name: "Node 24", major: "24", binary: () => process.execPath },
  {
    name: "Node 22",
    major: "22",
    binary: () =>
      execFileSync("bash", [`${ROOT}scripts/fetch-runtime.sh`, "node22"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      }).trim(),
  },
].filter((node) => only === undefined || node.major === only);

const failed = [];
for (const node of nodes) {
  const binary = node.binary();
  console.log(`\n== the suites with QuickJS on ${node.name} (${binary})`);
  const result = spawnSync(binary, [`${ROOT}node_modules/vitest/vitest.mjs`, "run", ...SUITES], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, CODEMODE_EXECUTOR: "quickjs", CODEMODE_TEST_STORES: "memory,sqlite" },
  });
  if (result.status !== 0) failed.push(`${node.name}: vitest exited with ${result.status ?? result.signal}`);
}
if (failed.length > 0) {
  console.error(`\nthe QuickJS runs failed:\n${failed.map((line) => `- ${line}`).join("\n")}`);
  process.exit(1);
}
console.log(`\nthe suites pass with QuickJS on ${nodes.map((node) => node.name).join(" and ")}`);
