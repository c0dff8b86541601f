/**
 * Each store is a subpath of its own so that a user loads only the driver they chose: a SQLite
 * user need not install pg or redis, and must not load them. These stories import the BUILT
 * package by its published names (`@codemode/storage/sqlite`, …) in a child process and list
 * every module it resolved: run `npm run build` first (CI does).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const BUILT = fileURLToPath(new URL("../dist/sqlite/index.js", import.meta.url));

const DRIVERS = {
  pg: /\/node_modules\/(pg|pg-pool|@keyv\/postgres)\//,
  redis: /\/node_modules\/(@keyv\/redis|@redis\/[^/]+|redis)\//,
};

describe("the subpaths load only their own driver", () => {
  it("@codemode/storage/sqlite loads neither pg nor redis, and works", async () => {
    const loaded = await modulesLoadedBy(`
      const { sqliteStorage } = await import("@codemode/storage/sqlite");
      const storage = sqliteStorage(":memory:");
      const index = storage.index.forRuntime("default");
      await index.put({ id: "run-1", status: "paused", createdAt: 1, updatedAt: 2 });
      const page = await index.list({ limit: 10 });
      if (page.length !== 1 || page[0].id !== "run-1") throw new Error("unexpected page " + JSON.stringify(page));
      await storage.close();
    `);
    expect(loaded).toContain("node:sqlite");
    expect(loaded.filter((url) => DRIVERS.pg.test(url))).toEqual([]);
    expect(loaded.filter((url) => DRIVERS.redis.test(url))).toEqual([]);
  });

  it("@codemode/storage (types only) and @codemode/storage/memory load no driver", async () => {
    const loaded = await modulesLoadedBy(`
      await import("@codemode/storage");
      const { memoryStorage } = await import("@codemode/storage/memory");
      await memoryStorage().close();
    `);
    expect(loaded.some((url) => url.includes("/packages/storage/dist/memory/"))).toBe(true);
    expect(loaded.filter((url) => DRIVERS.pg.test(url) || DRIVERS.redis.test(url) || url === "node:sqlite")).toEqual(
      [],
    );
  });

  it("@codemode/storage/redis loads no pg, and @codemode/storage/postgres no redis", async () => {
    const redis = await modulesLoadedBy(`await import("@codemode/storage/redis");`);
    expect(redis.some((url) => DRIVERS.redis.test(url))).toBe(true);
    expect(redis.filter((url) => DRIVERS.pg.test(url))).toEqual([]);
    const postgres = await modulesLoadedBy(`await import("@codemode/storage/postgres");`);
    expect(postgres.some((url) => DRIVERS.pg.test(url))).toBe(true);
    expect(postgres.filter((url) => DRIVERS.redis.test(url))).toEqual([]);
  });
});

/** Runs `body` as an ES module in a fresh Node.js process at the repository's root; answers every module URL it resolved. */
async function modulesLoadedBy(body: string): Promise<string[]> {
  if (!existsSync(BUILT))
    throw new Error(`these tests import the built package; run \`npm run build\` first (missing ${BUILT})`);
  const script = `
    import { registerHooks } from "node:module";
    const loaded = new Set();
    registerHooks({
      resolve(specifier, context, nextResolve) {
        const resolved = nextResolve(specifier, context);
        loaded.add(resolved.url);
        return resolved;
      },
    });
    ${body}
    process.stdout.write(JSON.stringify([...loaded]));
  `;
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { cwd: ROOT, timeout: 20_000 },
      (error, out, err) => {
        if (error) reject(new Error(`${error.message}\n${err}`));
        else resolve(out);
      },
    );
  });
  return JSON.parse(stdout) as string[];
}
