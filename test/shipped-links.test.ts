/**
 * What the tarballs ship points at what a user has: a package README's links and `codemode
 * --help` name pages by their address (the repository's docs/ is not in any tarball), or files
 * inside the package itself. Reads the built CLI: `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = readdirSync(join(ROOT, "packages")).filter((name) =>
  existsSync(join(ROOT, "packages", name, "README.md")),
);

describe("links in what the packages ship", () => {
  it.each(PACKAGES)("packages/%s/README.md links only to addresses or to files inside the package", (name) => {
    const folder = join(ROOT, "packages", name);
    const text = readFileSync(join(folder, "README.md"), "utf8");
    const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    expect(targets.length).toBeGreaterThan(0);
    const outside = targets.filter((target) => {
      if (/^(https?:|mailto:|#)/.test(target)) return false;
      const path = normalize(join(folder, target.split("#")[0]!));
      return relative(folder, path).startsWith("..") || !existsSync(path);
    });
    expect(outside).toEqual([]);
  });

  it("codemode --help names the operating guide by its address, not a path the package lacks", () => {
    const help = execFileSync(process.execPath, [join(ROOT, "packages/cli/dist/bin.js"), "--help"], {
      encoding: "utf8",
    });
    expect(help).toContain("https://github.com/codemode-for-node/codemode/blob/main/docs/operating.md");
    expect(help).not.toMatch(/(^|\s)docs\/\S+\.md/);
  });
});
