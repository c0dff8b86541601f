/**
 * Documented samples are tested, like Rust's doctests: every ```ts block of README.md,
 * packages/*\/README.md and docs/*.md is type-checked (one `tsc` run, the repository's strict
 * settings, `@codemode/*` from the built declarations), and every whole program also runs. A
 * marker on the line before a fence says what a block is (test/doc-samples/extract-samples.ts):
 *
 *   <!-- sample: fragment — declares: runtime, model -->   checked with those names declared
 *   <!-- sample: fragment — continues -->                  checked after the page's sample before it
 *   <!-- sample: no-run — needs an OpenAI key -->          checked, not run
 *   <!-- sample: skip — a member of a generated type -->   neither (listed with its reason)
 *
 * Needs `npm run build` first; the bullmq sample needs Redis at 127.0.0.1:6379.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatFailure,
  REPOSITORY,
  type SampleFailure,
  type SampleProject,
  type TypeCheckReport,
  typeCheckSamples,
  writeSampleProject,
} from "./doc-samples/check-samples.ts";
import { extractSamples, type MarkerProblem, type Sample } from "./doc-samples/extract-samples.ts";
import { runSample } from "./doc-samples/run-sample.ts";

/** A page of broken samples, checked in the same `tsc` run as the real ones: the test must catch them. */
const SELF_TEST_PAGE = "doc-samples-self-test.md";
const SELF_TEST_MARKDOWN = `# Broken on purpose

\`\`\`ts
const count: number = "three";
\`\`\`

<!-- sample: skip — shows a mistake on purpose -->
\`\`\`ts
const count: number = "three";
\`\`\`

<!-- sample: fragment — declares: runtime, notify -->
\`\`\`ts
const outcome = await runtime.execute({ code: "async () => 1" });
notify(outcome.status);
await runtime.execute({ cod: "async () => 2" });
\`\`\`

<!-- sample: fragment — continues -->
\`\`\`ts
const status: number = outcome.status;
\`\`\`

\`\`\`ts
throw new Error("a sample that fails when it runs");
\`\`\`
`;

function markdownPages(): string[] {
  const pages = ["README.md"];
  for (const name of readdirSync(join(REPOSITORY, "packages")).sort()) {
    if (existsSync(join(REPOSITORY, "packages", name, "README.md"))) pages.push(`packages/${name}/README.md`);
  }
  for (const name of readdirSync(join(REPOSITORY, "docs")).sort()) if (name.endsWith(".md")) pages.push(`docs/${name}`);
  return pages;
}

const samples: Sample[] = [];
const problems: MarkerProblem[] = [];
let project: SampleProject;
let typeCheck: TypeCheckReport;
let runs: SampleFailure[];

beforeAll(async () => {
  for (const built of ["core", "storage", "ai-sdk", "langchain", "bullmq", "cli"]) {
    if (!existsSync(join(REPOSITORY, "packages", built, "dist/index.d.ts"))) {
      throw new Error(
        `packages/${built}/dist is missing: the samples import the built packages, run \`npm run build\``,
      );
    }
  }
  for (const page of markdownPages()) {
    const found = extractSamples(page, readFileSync(join(REPOSITORY, page), "utf8"));
    samples.push(...found.samples);
    problems.push(...found.problems);
  }
  const selfTest = extractSamples(SELF_TEST_PAGE, SELF_TEST_MARKDOWN);
  project = writeSampleProject([...samples, ...selfTest.samples]);
  const programs = [...project.modules].filter(([sample]) => sample.kind === "program");
  // Type-checking and running are independent: the runs go on while tsc works.
  const [report, runFailures] = await Promise.all([
    typeCheckSamples(project),
    Promise.all(programs.map(([, module]) => runSample(module))),
  ]);
  typeCheck = report;
  runs = runFailures.filter((failure) => failure !== undefined);
}, 180_000);

afterAll(() => {
  if (project) rmSync(project.directory, { recursive: true, force: true });
});

const selfTestFailures = (failures: readonly SampleFailure[]) =>
  failures.filter((failure) => failure.file === SELF_TEST_PAGE).map(formatFailure);
const pageFailures = (failures: readonly SampleFailure[]) =>
  failures.filter((failure) => failure.file !== SELF_TEST_PAGE).map(formatFailure);

describe("the checker (self-test)", () => {
  it("reports a broken sample at its Markdown file and line, and nothing for a skipped one", () => {
    const failures = selfTestFailures(typeCheck.failures);
    expect(failures).toContainEqual(expect.stringMatching(/^doc-samples-self-test\.md:4: TS2322: Type 'string'/));
    expect(failures.filter((failure) => failure.startsWith(`${SELF_TEST_PAGE}:9:`))).toEqual([]);
  });

  it("types a fragment's declared names from the prelude, and checks a continuation with what came before", () => {
    const failures = selfTestFailures(typeCheck.failures);
    // `runtime` is the prelude's CodemodeRuntime: a misspelt option is caught; `notify` is `any`.
    expect(failures).toContainEqual(expect.stringMatching(/^doc-samples-self-test\.md:16: TS2561: .*'cod'/));
    expect(failures).toContainEqual(expect.stringMatching(/^doc-samples-self-test\.md:21: TS2322: Type '.*' is not/));
    expect(failures).toHaveLength(3);
  });

  it("reports a program that fails when it runs, at the Markdown line that threw", () => {
    const failures = selfTestFailures(runs);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^doc-samples-self-test\.md:24: run: exited with code 1/);
    expect(failures[0]).toContain(`${SELF_TEST_PAGE}:25`);
  });

  it("refuses a marker it cannot read, or one that marks no sample", () => {
    const { problems: found } = extractSamples(
      "page.md",
      "<!-- sample: fragmnet — declares: a -->\n```ts\na;\n```\n\n<!-- sample: skip -->\n```ts\n```\n\n<!-- sample: no-run — x -->\ntext\n",
    );
    expect(found.map((problem) => `${problem.file}:${problem.line}`)).toEqual(["page.md:1", "page.md:6", "page.md:10"]);
  });
});

describe("the documentation's samples", () => {
  it("every marker reads as one", () => {
    expect(problems.map((problem) => `${problem.file}:${problem.line}: ${problem.message}`)).toEqual([]);
  });

  it("every ```ts sample type-checks (opted-out samples are listed)", () => {
    const count = (kind: Sample["kind"]) => samples.filter((sample) => sample.kind === kind).length;
    const optedOut = samples.filter((sample) => sample.kind === "skip" || sample.kind === "no-run");
    const lines = optedOut.map((sample) => `  ${sample.file}:${sample.line}: ${sample.kind}: ${sample.reason}`);
    console.log(
      `${samples.length} samples: ${count("program")} programs (checked and run), ${count("fragment")} fragments, ` +
        `${count("no-run")} no-run, ${count("skip")} skipped. Opted out:\n${lines.join("\n")}`,
    );
    if (typeCheck.thirdParty.length > 0) {
      const files = [...new Set(typeCheck.thirdParty.map((failure) => failure.file))];
      console.log(`${typeCheck.thirdParty.length} errors in third-party declarations, ignored: ${files.join(", ")}`);
    }
    const failures = pageFailures(typeCheck.failures);
    expect(failures.length, `samples that do not type-check:\n${failures.join("\n")}\n`).toBe(0);
  });

  it("every whole-program sample runs and exits 0", () => {
    expect(samples.some((sample) => sample.kind === "program")).toBe(true);
    const failures = pageFailures(runs);
    expect(failures.length, `samples that fail when they run:\n${failures.join("\n")}\n`).toBe(0);
  });
});
