import { type Dirent, existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The requirement ids that code comments and test names cite are defined in docs/requirements.md.
 * This test reads that page and every file that may cite an id, and fails on an id the page does
 * not define or defines twice.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
const requirementsPage = join(root, "docs", "requirements.md");

/** An id as cited anywhere: a prefix, then a number with an optional letter, or a single capital. */
const CITED_ID = /(?<![A-Za-z0-9])R-[A-Z]{2,4}-(?:[0-9]+[a-z]?|[A-Z](?![A-Za-z0-9]))/g;
/** A definition: a bullet that starts with the id in bold. */
const DEFINED_ID = /^- \*\*(R-[A-Z]{2,4}-[0-9A-Za-z]+)\*\*/gm;

const SCANNED_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx", ".md", ".html"];
const SKIPPED_DIRECTORIES = new Set(["node_modules", "dist", ".git"]);

function entries(directory: string): Dirent[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true });
}

function isScanned(name: string): boolean {
  return SCANNED_EXTENSIONS.some((extension) => name.endsWith(extension));
}

/** Every scanned file below `directory`, skipping build output, dependencies and git's folder. */
function filesBelow(directory: string): string[] {
  const files: string[] = [];
  for (const entry of entries(directory)) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) files.push(...filesBelow(path));
    } else if (entry.isFile() && isScanned(entry.name)) {
      files.push(path);
    }
  }
  return files;
}

/** The files that may cite requirement ids: sources, tests, examples, benchmarks and docs. */
function citingFiles(): string[] {
  const files: string[] = [];
  for (const pkg of entries(join(root, "packages"))) {
    if (!pkg.isDirectory()) continue;
    files.push(...filesBelow(join(root, "packages", pkg.name, "src")));
    const readme = join(root, "packages", pkg.name, "README.md");
    if (existsSync(readme)) files.push(readme);
  }
  for (const folder of ["test", "examples", "bench"]) files.push(...filesBelow(join(root, folder)));
  if (existsSync(join(root, "README.md"))) files.push(join(root, "README.md"));
  for (const entry of entries(join(root, "docs"))) {
    if (entry.isFile() && entry.name.endsWith(".md")) files.push(join(root, "docs", entry.name));
  }
  return files;
}

/** Each cited id, with the files (relative to the repository) that cite it. */
function citedIds(): Map<string, string[]> {
  const cited = new Map<string, string[]>();
  for (const file of citingFiles()) {
    const ids = new Set(readFileSync(file, "utf8").match(CITED_ID) ?? []);
    for (const id of ids) cited.set(id, [...(cited.get(id) ?? []), relative(root, file)]);
  }
  return cited;
}

/** Every id the page defines, in page order, duplicates kept. */
function definedIds(): string[] {
  return [...readFileSync(requirementsPage, "utf8").matchAll(DEFINED_ID)].map((match) => match[1]!);
}

function compareIds(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

describe("requirement ids", () => {
  it("every requirement id the code cites is defined in docs/requirements.md", () => {
    const defined = new Set(definedIds());
    const cited = citedIds();
    expect(defined.size).toBeGreaterThan(0);
    expect(cited.size).toBeGreaterThan(0);

    const undefinedIds = [...cited.keys()].filter((id) => !defined.has(id)).sort(compareIds);
    const where = undefinedIds.map((id) => `${id}: ${cited.get(id)!.join(", ")}`).join("\n");
    expect(undefinedIds, `cited but not defined in docs/requirements.md:\n${where}`).toEqual([]);
  });

  it("no requirement id is defined twice in docs/requirements.md", () => {
    const seen = new Set<string>();
    const duplicates = new Set<string>();
    for (const id of definedIds()) {
      if (seen.has(id)) duplicates.add(id);
      seen.add(id);
    }
    expect([...duplicates].sort(compareIds)).toEqual([]);
  });
});
