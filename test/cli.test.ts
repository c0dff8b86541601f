import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG, codemode, FIXTURES, problemLine, scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";

/**
 * The `codemode` bin as an operator runs it: a child process of the built package, every command
 * with --json parsed and exit codes checked. This file has the failures an operator meets (a
 * config that does not load, a store that is down, usage errors), each said in one line with
 * what to do; cli-sqlite.test.ts and cli-redis.test.ts run the commands against a real SQLite
 * file and a real Redis. Needs `npm run build` first.
 */

const directory = scratchDirectory();

describe("codemode when things are wrong", () => {
  it(
    "a config that does not load: one line naming the file and the cause, exit 6",
    async () => {
      const broken = await codemode(["--config", join(FIXTURES, "broken.config.ts"), "executions"]);
      expect(broken.code).toBe(6);
      expect(broken.stderr.trim()).toBe(
        "codemode: could not load the config test/cli-fixtures/broken.config.ts: DATABASE_URL is not set; fix the error above in the module, or point --config at the right file",
      );
      const notRuntime = await codemode(["--config", join(FIXTURES, "not-a-runtime.config.ts"), "pending", "--json"]);
      expect(notRuntime.code).toBe(6);
      expect(notRuntime.stderr.trim()).toMatch(
        /^codemode: the config .*not-a-runtime\.config\.ts does not export a Code Mode runtime; export default a runtime/,
      );
      expect(JSON.parse(notRuntime.stdout)).toMatchObject({ error: { exitCode: 6 } });
      const missing = await codemode(["--config", "./nowhere.config.ts", "pending"]);
      expect(missing.code).toBe(6);
      expect(missing.stderr.trim()).toBe(
        "codemode: the config ./nowhere.config.ts does not exist; pass --config with the path of the module that exports your runtime",
      );
    },
    TIMEOUT,
  );

  it(
    "an unreachable store: one line saying so and what to check, exit 7 (reads, decisions and maintenance alike)",
    async () => {
      const env = {
        CODEMODE_TEST_STORE: "redis://127.0.0.1:1",
        CODEMODE_TEST_NAME: "down",
        CODEMODE_TEST_CONNECT_MS: "300",
      };
      for (const command of [["executions"], ["approve", randomUUID()], ["expire"]]) {
        const result = await codemode(["--config", CONFIG, ...command], env);
        expect(result.code, command.join(" ")).toBe(7);
        expect(problemLine(result)).toMatch(
          /^codemode: the store is unreachable \(.+\); check that it is running and that the config points at it$/,
        );
      }
      const asJson = await codemode(["--config", CONFIG, "pending", "--json"], env);
      expect(JSON.parse(asJson.stdout)).toMatchObject({ error: { exitCode: 7, code: "STORAGE_ERROR" } });
    },
    TIMEOUT,
  );

  it(
    "a SQLite store that cannot be opened, at config import or in its factory: exit 7 naming the store, not 6",
    async () => {
      const paths = [
        { path: directory, cause: "unable to open database file" }, // a folder, not a file
        { path: join(CONFIG, "runs.sqlite"), cause: "EEXIST: file already exists, mkdir" }, // its folder cannot be made: CONFIG is a file
      ];
      const line =
        /^codemode: the store is unreachable \(the config .+ could not open its store: .+\); check that the config's SQLite path names a file this process can create and write \(not a folder\)$/;
      for (const { path, cause } of paths) {
        const atImport = await codemode(["--config", join(FIXTURES, "sqlite-at-import.config.ts"), "executions"], {
          CODEMODE_TEST_SQLITE_PATH: path,
        });
        expect(atImport.code, path).toBe(7);
        expect(problemLine(atImport)).toMatch(line);
        expect(problemLine(atImport)).toContain(`sqlite-at-import.config.ts could not open its store: ${cause}`);
        const inFactory = await codemode(["--config", CONFIG, "pending", "--json"], {
          CODEMODE_TEST_STORE: `sqlite:${path}`,
        });
        expect(inFactory.code, path).toBe(7);
        expect(problemLine(inFactory)).toMatch(line);
        expect(JSON.parse(inFactory.stdout)).toMatchObject({ error: { exitCode: 7, code: "STORAGE_ERROR" } });
      }
    },
    TIMEOUT,
  );

  it(
    "usage errors exit 2; --help exits 0 and lists the exit codes",
    async () => {
      expect((await codemode(["frobnicate"])).code).toBe(2);
      expect((await codemode(["show"])).code).toBe(2);
      const badNumber = await codemode(["--config", CONFIG, "executions", "--limit", "lots"], {
        CODEMODE_TEST_STORE: `sqlite:${join(directory, "usage.sqlite")}`,
      });
      expect(badNumber.code).toBe(2);
      expect(problemLine(badNumber)).toBe('codemode: --limit needs a whole number of at least 1, not "lots"');
      const help = await codemode(["--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("7  the store is unreachable");
    },
    TIMEOUT,
  );
});
