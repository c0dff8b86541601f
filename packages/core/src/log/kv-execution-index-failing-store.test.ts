import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { CodemodeError } from "../outcome.js";
import { BASE } from "./execution-index-fixtures.js";
import type { KeyvLike } from "./interface.js";
import { createKeyvExecutionIndex } from "./kv-execution-index.js";
import { createInProcessLock } from "./lock.js";

describe("createKeyvExecutionIndex: a failing store", () => {
  const failing = () => {
    throw new Error("connection refused");
  };
  const code = (promise: Promise<unknown>) =>
    promise.then(
      () => "resolved",
      (error: unknown) => (CodemodeError.isInstance(error) ? error.code : "other error"),
    );

  it("over a Keyv whose adapter fails, every operation rejects with STORAGE_ERROR, never an empty page", async () => {
    // Keyv swallows adapter errors by default: the index must switch that off, or this would list nothing.
    const keyv = new Keyv({ store: { get: failing, set: failing, delete: failing, clear: failing } });
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    expect(await code(index.list({ limit: 10 }))).toBe("STORAGE_ERROR");
    expect(await code(index.list({ limit: 10, order: "oldest" }))).toBe("STORAGE_ERROR");
    expect(await code(index.count(["running"]))).toBe("STORAGE_ERROR");
    expect(await code(index.put({ id: "a", status: "running", createdAt: BASE, updatedAt: BASE }))).toBe(
      "STORAGE_ERROR",
    );
    expect(await code(index.remove({ id: "a", status: "running", createdAt: BASE }))).toBe("STORAGE_ERROR");
  });

  it("a store whose reads work but whose writes fail rejects the put with STORAGE_ERROR", async () => {
    const map = new Map<string, unknown>();
    const keyv = new Keyv({
      store: { get: async (key: string) => map.get(key), set: failing, delete: failing, clear: failing },
    });
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    expect(await code(index.put({ id: "a", status: "running", createdAt: BASE, updatedAt: BASE }))).toBe(
      "STORAGE_ERROR",
    );
  });

  it("a batched read that fails, or returns something that is not an index, is STORAGE_ERROR", async () => {
    const keyv: KeyvLike = {
      get: async () => undefined,
      set: async () => true,
      delete: async () => true,
      getMany: async () => Promise.reject(new Error("timeout")),
    };
    expect(await code(createKeyvExecutionIndex(keyv, "default", createInProcessLock()).list({ limit: 5 }))).toBe(
      "STORAGE_ERROR",
    );
    const garbled: KeyvLike = { ...keyv, getMany: async (keys) => keys.map(() => "{not json") };
    expect(await code(createKeyvExecutionIndex(garbled, "default", createInProcessLock()).count(["running"]))).toBe(
      "STORAGE_ERROR",
    );
  });
});
