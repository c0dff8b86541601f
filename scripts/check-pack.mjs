// `npm run test:pack`: what a registry user gets, checked from the packed tarballs (run after
// `npm run build`).
//
// 1. `npm pack` of every package: the tarball holds README.md, LICENSE and dist; no declaration
//    map (it would point at src/, which is not shipped); every source map carries its sources.
// 2. `publint --strict` and `@arethetypeswrong/cli` on every tarball. The packages are ESM only
//    (`engines: node >= 24`), so attw runs with its `esm-only` profile: CommonJS `require` of an
//    ES module is not reported, everything else is.
// 3. An empty project installs the tarballs and the peers from the registry, as a stranger would,
//    and type-checks under strict settings with `skipLibCheck: false` a file that imports every
//    public entry point of every package, and the quickstart; then the quickstart runs: a program
//    pauses on a SQLite file and a second runtime on that file approves it.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const PACKAGES = ["core", "storage", "ai-sdk", "langchain", "bullmq", "cli"];
/** The peers a stranger installs beside the packages, at the ranges this repository tests. */
const PEERS = [
  "ai",
  "@ai-sdk/openai",
  "langchain",
  "@langchain/core",
  "@langchain/langgraph",
  "@modelcontextprotocol/sdk",
  "@opentelemetry/api",
  "bullmq",
  "pg",
  "@keyv/redis",
  "@keyv/postgres",
  "zod",
  "typescript",
  "@types/node",
];

const QUICKSTART = `// The quickstart as a stranger writes it: a durable runtime on a SQLite file, a program that
// pauses for approval, and a second runtime (as another process would) that approves it.
import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";

const orders: Array<{ sku: string; quantity: number }> = [];
const shop = defineConnector({
  name: "shop",
  instructions: "Every order needs a human's approval.",
  tools: {
    search_products: {
      readOnly: true,
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      execute: async (args: { query: string }) => [{ sku: \`\${args.query}-1\`, price: 9 }],
    },
    create_order: {
      requiresApproval: true,
      inputSchema: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
        required: ["sku", "quantity"],
      },
      execute: async (args: { sku: string; quantity: number }) => {
        orders.push(args);
        return { orderId: \`order-\${orders.length}\` };
      },
    },
  },
});

function open() {
  const storage = sqliteStorage("./.codemode/quickstart.sqlite");
  return { storage, runtime: createCodemodeRuntime({ name: "quickstart", connectors: [shop], storage }) };
}

const first = open();
const paused: Outcome = await first.runtime.execute({
  code: \`async () => {
    const [mug] = await shop.search_products({ query: "mug" });
    return shop.create_order({ sku: mug.sku, quantity: 2 });
  }\`,
});
await first.runtime.close();
await first.storage.close();
if (paused.status !== "paused") throw new Error(\`expected a pause, got \${JSON.stringify(paused)}\`);

const second = open();
const done = await second.runtime.approve({ executionId: paused.executionId, by: "ann" });
await second.runtime.close();
await second.storage.close();
if (done.status !== "completed") throw new Error(\`expected completion, got \${JSON.stringify(done)}\`);
console.log(\`quickstart: \${done.status} \${JSON.stringify(done.result)} after \${orders.length} order\`);
`;

const work = mkdtempSync(join(tmpdir(), "codemode-pack-"));
const keep = process.argv.includes("--keep");
const step = (text) => console.log(`\n== ${text}`);
const run = (command, args, options = {}) => execFileSync(command, args, { stdio: "inherit", ...options });
const problems = [];

try {
  step("npm pack");
  const tarballs = [];
  for (const name of PACKAGES) {
    const manifest = JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8"));
    const output = execFileSync("npm", ["pack", "--json", "--pack-destination", work, "-w", `packages/${name}`], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [packed] = JSON.parse(output);
    const files = packed.files.map((file) => file.path);
    for (const required of ["README.md", "LICENSE", "package.json"])
      if (!files.includes(required)) problems.push(`${manifest.name}: the tarball has no ${required}`);
    for (const file of files.filter((path) => path.endsWith(".d.ts.map")))
      problems.push(`${manifest.name}: ships the declaration map ${file}, which points at unshipped sources`);
    for (const file of files.filter((path) => path.endsWith(".js.map"))) {
      const map = JSON.parse(readFileSync(join(ROOT, "packages", name, file), "utf8"));
      if (!Array.isArray(map.sourcesContent) || map.sourcesContent.some((text) => typeof text !== "string"))
        problems.push(`${manifest.name}: ${file} does not carry its sources`);
    }
    for (const field of ["repository", "homepage", "keywords", "license"])
      if (!manifest[field]) problems.push(`${manifest.name}: package.json has no ${field}`);
    tarballs.push({
      name: manifest.name,
      exports: Object.keys(manifest.exports ?? {}),
      path: join(work, packed.filename),
    });
    console.log(`${packed.filename}: ${files.length} files, ${packed.size} bytes`);
  }

  step("publint and attw");
  for (const tarball of tarballs) {
    run("npx", ["--no-install", "publint", "run", tarball.path, "--strict", "--pack", "false"], { cwd: ROOT });
    run("npx", ["--no-install", "attw", tarball.path, "--profile", "esm-only", "--format", "table-flipped"], {
      cwd: ROOT,
    });
  }

  step("install into an empty project");
  const project = join(work, "stranger");
  mkdirSync(project);
  const rootManifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const ranges = { ...rootManifest.dependencies, ...rootManifest.devDependencies };
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "stranger", private: true, type: "module", allowScripts: { "isolated-vm": true } }, null, 2)}\n`,
  );
  const peers = PEERS.map((name) => (ranges[name] ? `${name}@${ranges[name]}` : name));
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs.map((t) => t.path), ...peers], {
    cwd: project,
  });

  step("type-check every entry point and the quickstart (strict, skipLibCheck: false)");
  writeFileSync(
    join(project, "tsconfig.json"),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2024",
          lib: ["ES2024", "DOM"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          noEmit: true,
          allowImportingTsExtensions: true,
          types: ["node"],
        },
        include: ["*.ts"],
      },
      null,
      2,
    )}\n`,
  );
  const entryPoints = tarballs.flatMap((tarball) =>
    tarball.exports
      .filter((subpath) => subpath !== "./package.json")
      .map((subpath) => `${tarball.name}${subpath === "." ? "" : subpath.slice(1)}`),
  );
  writeFileSync(
    join(project, "entry-points.ts"),
    `// Every public entry point of every package, imported as a user would.\n${entryPoints
      .map((specifier, index) => `import * as entry${index} from "${specifier}";`)
      .join("\n")}\nexport const entries = [${entryPoints.map((_, index) => `entry${index}`).join(", ")}];\n`,
  );
  writeFileSync(join(project, "quickstart.ts"), QUICKSTART);
  run(process.execPath, [join(project, "node_modules/typescript/bin/tsc"), "-p", project], { cwd: project });

  step("run the quickstart");
  const printed = execFileSync(process.execPath, ["quickstart.ts"], { cwd: project, encoding: "utf8" });
  process.stdout.write(printed);
  if (!printed.includes("quickstart: completed")) problems.push("the quickstart did not complete");
} finally {
  if (keep) console.log(`\nkept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

if (problems.length > 0) {
  console.error(`\n${problems.length} problem(s):\n${problems.map((problem) => `- ${problem}`).join("\n")}`);
  process.exit(1);
}
console.log("\nthe packed packages install, type-check and run");
