/**
 * The four stores a durable story runs on (memory, SQLite, Redis, PostgreSQL), with the check
 * that fails a suite in CI when Redis or PostgreSQL is missing and skips it elsewhere, saying why.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Outcome } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { memoryStorage } from "@codemode/storage/memory";
import { postgresStorage } from "@codemode/storage/postgres";
import { redisStorage } from "@codemode/storage/redis";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { tcpUnreachable } from "@codemode/storage/testing";
import { afterEach, beforeAll } from "vitest";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

export interface Store {
  name: string;
  url?: string;
  open(namespace: string): CodemodeStorage;
}

const ALL_STORES: Store[] = [
  { name: "memory", open: () => memoryStorage() },
  {
    name: "SQLite",
    open: () => sqliteStorage(join(mkdtempSync(join(tmpdir(), "codemode-stories-")), "runs.sqlite")),
  },
  { name: "Redis", url: REDIS_URL, open: (namespace) => redisStorage(REDIS_URL, { namespace }) },
  { name: "PostgreSQL", url: POSTGRES_URL, open: (namespace) => postgresStorage(POSTGRES_URL, { namespace }) },
];

/**
 * The stores the stories run on: all four, or those `CODEMODE_TEST_STORES` names (`memory,sqlite`):
 * the QuickJS runs of the suites vary the sandbox, not the store (scripts/test-quickjs.mjs).
 */
export const STORES: Store[] = storesFromEnvironment();

function storesFromEnvironment(): Store[] {
  const names = process.env.CODEMODE_TEST_STORES?.trim();
  if (!names) return ALL_STORES;
  const wanted = names.split(",").map((name) => name.trim().toLowerCase());
  const unknown = wanted.filter((name) => !ALL_STORES.some((store) => store.name.toLowerCase() === name));
  if (unknown.length > 0) throw new Error(`CODEMODE_TEST_STORES names unknown stores: ${unknown.join(", ")}`);
  return ALL_STORES.filter((store) => wanted.includes(store.name.toLowerCase()));
}

/** Fails the suite in CI when the service is missing; elsewhere each story is skipped with the reason printed. */
export function serviceCheck(store: Store): () => boolean {
  let unavailable: string | undefined;
  beforeAll(async () => {
    unavailable = store.url ? await tcpUnreachable(store.url) : undefined;
    if (unavailable && process.env.CI)
      throw new Error(`${store.name} is not reachable (${unavailable}); CI must provide it`);
  });
  return () => {
    if (unavailable) console.warn(`${store.name}: story not run: ${unavailable}`);
    return unavailable !== undefined;
  };
}

/**
 * What a test opened (runtimes, storages, anything with `close`), closed after each test, the last
 * opened first; a close that fails is passed over.
 */
export function closedAfterEach(): Array<{ close(): Promise<unknown> }> {
  const opened: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const each of opened.splice(0).reverse()) await each.close().catch(() => undefined);
  });
  return opened;
}

export function expectStatus<S extends Outcome["status"]>(
  outcome: Outcome | undefined,
  status: S,
): asserts outcome is Extract<Outcome, { status: S }> {
  if (outcome?.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome).slice(0, 600)}`);
}
