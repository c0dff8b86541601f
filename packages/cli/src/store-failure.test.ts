import { DatabaseSync } from "node:sqlite";
import { CodemodeError } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { storeFailure } from "./store-failure.js";

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("it did not throw");
};

describe("storeFailure: which errors of a config or a command are the store's (exit 7, not 6)", () => {
  it("a SQLite file that cannot be opened, or its folder that cannot be made, is a file store failure", () => {
    expect(storeFailure(thrown(() => new DatabaseSync("/")))).toEqual({
      kind: "file",
      message: "unable to open database file",
    });
    const folder = Object.assign(new Error("EACCES: permission denied, mkdir '/srv/runs'"), { syscall: "mkdir" });
    expect(storeFailure(folder)?.kind).toBe("file");
  });

  it("a refused or timed-out connection to Redis or PostgreSQL is a server store failure", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" });
    expect(storeFailure(refused)).toEqual({ kind: "server", message: refused.message });
    const everyAddress = new AggregateError([refused, refused]);
    expect(storeFailure(everyAddress)).toEqual({ kind: "server", message: refused.message });
    const timeout = Object.assign(new Error("Connection timeout"), { name: "ConnectionTimeoutError" });
    expect(storeFailure(timeout)?.kind).toBe("server");
    const password = Object.assign(new Error('password authentication failed for user "app"'), {
      severity: "FATAL",
      code: "28P01",
    });
    expect(storeFailure(password)?.kind).toBe("server");
  });

  it("a STORAGE_ERROR is the store's, and says what kind of store from its cause", () => {
    const down = new CodemodeError("STORAGE_ERROR", "listing executions: could not connect to Redis within 300 ms");
    expect(storeFailure(down)).toEqual({ kind: "server", message: down.message });
    const file = thrown(() => new DatabaseSync("/"));
    const wrapped = new CodemodeError("STORAGE_ERROR", "reading the run: unable to open database file", {
      cause: file,
    });
    expect(storeFailure(wrapped)).toEqual({ kind: "file", message: wrapped.message });
  });

  it("a config's own mistakes are not: a missing setting, a syntax error, a file it reads, a fetch, a SQL error code", () => {
    expect(storeFailure(new Error("DATABASE_URL is not set"))).toBeUndefined();
    expect(storeFailure(new SyntaxError("Unexpected token '}'"))).toBeUndefined();
    const missing = Object.assign(new Error("ENOENT: no such file or directory, open 'secrets.json'"), {
      code: "ENOENT",
      syscall: "open",
    });
    expect(storeFailure(missing)).toBeUndefined();
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(storeFailure(new TypeError("fetch failed", { cause: refused }))).toBeUndefined();
    expect(storeFailure(new CodemodeError("NOT_FOUND", "no execution x"))).toBeUndefined();
    expect(
      storeFailure(Object.assign(new Error("syntax error"), { severity: "ERROR", code: "42601" })),
    ).toBeUndefined();
  });
});
