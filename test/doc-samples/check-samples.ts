/**
 * Type-checks Markdown samples the way a reader's project would compile them: each sample is a
 * module in one temporary project whose `node_modules` is the repository's, so `@codemode/*`
 * resolves to the workspace packages' built declarations (`npm run build` first). One `tsc` run
 * checks every sample; its diagnostics are mapped back to the Markdown line they came from.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sample } from "./extract-samples.ts";

export const REPOSITORY = fileURLToPath(new URL("../..", import.meta.url));
const TSC = join(REPOSITORY, "node_modules/typescript/bin/tsc");
const PRELUDE = fileURLToPath(new URL("./prelude.ts", import.meta.url));
/** Stand-ins for the reader's own modules that samples import (`./connectors/github.ts`). */
const STAND_INS = fileURLToPath(new URL("./files", import.meta.url));

/** A diagnostic, at the Markdown line of the sample it is in (or at the file `tsc` named). */
export interface SampleFailure {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** A module of the temporary project: one sample, or a fragment after the samples it continues. */
export interface SampleModule {
  readonly path: string;
  /** The samples in the module, in order, each with the module line its code starts on. */
  readonly segments: readonly { readonly sample: Sample; readonly firstLine: number }[];
}

/** The temporary project holding the samples as modules. */
export interface SampleProject {
  readonly directory: string;
  /** The module written for each checked sample (every kind but `skip`). */
  readonly modules: ReadonlyMap<Sample, SampleModule>;
}

/** Writes the samples (all but `skip`) into a new temporary project. */
export function writeSampleProject(samples: readonly Sample[]): SampleProject {
  const directory = mkdtempSync(join(tmpdir(), "codemode-doc-samples-"));
  symlinkSync(join(REPOSITORY, "node_modules"), join(directory, "node_modules"), "dir");
  writeFileSync(join(directory, "package.json"), `${JSON.stringify({ private: true, type: "module" })}\n`);
  cpSync(STAND_INS, directory, { recursive: true });
  cpSync(PRELUDE, join(directory, "prelude.ts"));
  writeFileSync(join(directory, "tsconfig.json"), `${JSON.stringify(tsconfig(), null, 2)}\n`);

  const preludeNames = exportedNames(PRELUDE);
  const modules = new Map<Sample, SampleModule>();
  const chains = new Map<Sample, Sample[]>();
  let previous: Sample | undefined;
  for (const sample of samples) {
    if (sample.kind === "skip") continue;
    const before = previous && previous.file === sample.file ? chains.get(previous) : undefined;
    const chain = sample.continues && before ? [...before, sample] : [sample];
    chains.set(sample, chain);
    previous = sample;

    const path = join(directory, `${sample.file.replaceAll("/", "--")}--${sample.line}.ts`);
    // One header line, then each sample's code: a sample's line n is its segment's line n.
    const segments: { sample: Sample; firstLine: number }[] = [];
    let text = header(chain, preludeNames);
    let nextLine = 2;
    for (const part of chain) {
      segments.push({ sample: part, firstLine: nextLine });
      text += `\n${part.code}`;
      nextLine += part.code.split("\n").length;
    }
    writeFileSync(path, `${text}\n`);
    modules.set(sample, { path, segments });
  }
  return { directory, modules };
}

/**
 * The repository's compiler settings (tsconfig.base.json), with library declarations checked too:
 * a published `.d.ts` that names a type it does not ship fails here, as it would for a reader.
 * Unused locals are allowed: a sample may show a value (`const result = …`) and leave it to the reader.
 */
function tsconfig() {
  return {
    extends: join(REPOSITORY, "tsconfig.base.json"),
    compilerOptions: {
      composite: false,
      declaration: false,
      sourceMap: false,
      inlineSources: false,
      noEmit: true,
      skipLibCheck: false,
      noUnusedLocals: false,
      // Node 24 runs `.ts` files as they are, so a reader's imports name them with `.ts`.
      allowImportingTsExtensions: true,
    },
    include: ["**/*.ts"],
    exclude: ["node_modules"],
  };
}

/** The names the prelude gives a type to: `export declare const runtime: CodemodeRuntime;`. */
function exportedNames(preludePath: string): Set<string> {
  const source = readFileSync(preludePath, "utf8");
  return new Set([...source.matchAll(/^export declare const (\w+)/gm)].map((match) => match[1] ?? ""));
}

/** The declared names of a module's fragments: typed by the prelude when it has them, `any` otherwise. */
function header(chain: readonly Sample[], preludeNames: ReadonlySet<string>): string {
  const declares = [...new Set(chain.flatMap((sample) => sample.declares))];
  const typed = declares.filter((name) => preludeNames.has(name));
  const untyped = declares.filter((name) => !preludeNames.has(name));
  const last = chain.at(-1);
  return [
    ...(typed.length > 0 ? [`import { ${typed.join(", ")} } from "./prelude.ts";`] : []),
    ...untyped.map((name) => `declare let ${name}: any;`),
    "export {};",
    `// ${last?.file}:${last?.line}`,
  ].join(" ");
}

/** What one `tsc` run found. */
export interface TypeCheckReport {
  /** Errors in samples (at their Markdown line), in the prelude and stand-ins, and in our packages' declarations. */
  readonly failures: SampleFailure[];
  /**
   * Errors inside third-party declarations (`node_modules/ai` names DOM types such as `HeadersInit`
   * that a Node project's lib does not have): not ours to fix, so only listed.
   */
  readonly thirdParty: SampleFailure[];
}

/**
 * Runs `tsc` once over the project and answers its errors, each at its Markdown line. `tsc` checks
 * types only when no file has a syntax error, so a sample that does not parse is reported and the
 * others are checked in a second run without it.
 */
export async function typeCheckSamples(project: SampleProject): Promise<TypeCheckReport> {
  const byPath = new Map([...project.modules.values()].map((module) => [realpathSync(module.path), module]));
  const locate = (diagnostic: Diagnostic) => realpathOrSelf(resolve(project.directory, diagnostic.path));
  let diagnostics = await runTsc(project.directory, "tsconfig.json");
  if (diagnostics.length > 0 && diagnostics.every((diagnostic) => /^TS1\d{3}:/.test(diagnostic.message))) {
    const unparsed = new Set(diagnostics.map(locate));
    const rest = [...byPath.keys()].filter((path) => !unparsed.has(path));
    const restConfig = { extends: "./tsconfig.json", files: rest, include: [] };
    writeFileSync(join(project.directory, "tsconfig.parsed.json"), JSON.stringify(restConfig));
    diagnostics = [...diagnostics, ...(await runTsc(project.directory, "tsconfig.parsed.json"))];
  }
  const failures = diagnostics.map((diagnostic): SampleFailure => {
    const path = locate(diagnostic);
    const module = byPath.get(path);
    if (module) return { ...markdownLine(module, diagnostic.line), message: diagnostic.message };
    return { file: displayPath(path, project.directory), line: diagnostic.line, message: diagnostic.message };
  });
  // A sample that others continue is checked in their modules too: report each error once.
  const seen = new Set<string>();
  const unique = failures
    .filter((failure) => !seen.has(formatFailure(failure)) && seen.add(formatFailure(failure)))
    .sort((one, other) => one.file.localeCompare(other.file) || one.line - other.line);
  const isThirdParty = (failure: SampleFailure) => failure.file.startsWith("node_modules/");
  return { failures: unique.filter((failure) => !isThirdParty(failure)), thirdParty: unique.filter(isThirdParty) };
}

/** One `tsc -p` run; a run that fails without a diagnostic (a crash) is one too. */
function runTsc(directory: string, config: string): Promise<Diagnostic[]> {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [TSC, "-p", config, "--pretty", "false"],
      { cwd: directory, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const diagnostics = parseDiagnostics(`${stdout}${stderr}`);
        if (error && diagnostics.length === 0) {
          diagnostics.push({ path: config, line: 0, message: `tsc failed: ${error.message}\n${stdout}${stderr}` });
        }
        resolvePromise(diagnostics);
      },
    );
  });
}

/** The Markdown file and line of a module line (the header line belongs to the module's last sample). */
export function markdownLine(module: SampleModule, moduleLine: number): { file: string; line: number } {
  const segment = module.segments.findLast((candidate) => candidate.firstLine <= moduleLine) ?? module.segments.at(-1);
  if (!segment) return { file: module.path, line: moduleLine };
  if (moduleLine < segment.firstLine) return { file: segment.sample.file, line: segment.sample.line };
  return { file: segment.sample.file, line: segment.sample.line + 1 + moduleLine - segment.firstLine };
}

interface Diagnostic {
  readonly path: string;
  readonly line: number;
  readonly message: string;
}

/** `file(line,col): error TS2322: …`, with the indented lines after it as the rest of its message. */
function parseDiagnostics(output: string): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const text of output.split("\n")) {
    const located = /^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/.exec(text);
    if (located) {
      diagnostics.push({ path: located[1] ?? "", line: Number(located[2]), message: `${located[3]}: ${located[4]}` });
      continue;
    }
    const unlocated = /^error (TS\d+): (.*)$/.exec(text);
    if (unlocated) {
      diagnostics.push({ path: "tsconfig.json", line: 0, message: `${unlocated[1]}: ${unlocated[2]}` });
      continue;
    }
    const last = diagnostics.at(-1);
    if (last && /^\s+\S/.test(text)) {
      diagnostics[diagnostics.length - 1] = { ...last, message: `${last.message}\n    ${text.trim()}` };
    }
  }
  return diagnostics;
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function displayPath(path: string, directory: string): string {
  const inRepository = relative(REPOSITORY, path);
  if (!inRepository.startsWith("..") && !isAbsolute(inRepository)) return inRepository;
  return relative(directory, path);
}

/** `docs/storage.md:16: TS2304: Cannot find name 'github'.` */
export function formatFailure(failure: SampleFailure): string {
  return `${failure.file}:${failure.line}: ${failure.message}`;
}
