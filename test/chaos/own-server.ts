/**
 * A describe block's own store server: started before its tests, killed and removed after them.
 * A server that cannot be started fails the block in CI; elsewhere its tests say why and pass.
 */
import { afterAll, beforeAll } from "vitest";
import type { StoreServer } from "./managed-server.ts";
import { serverUnavailable, startStoreServer } from "./servers.ts";

export interface OwnServer {
  server?: StoreServer;
  /** Why there is no server, when there is none. */
  unavailable?: string;
}

export const STORES = [
  { kind: "redis", label: "Redis" },
  { kind: "postgres", label: "PostgreSQL" },
] as const;

export function ownServer(kind: StoreServer["kind"]): OwnServer {
  const own: OwnServer = {};
  beforeAll(async () => {
    own.unavailable = serverUnavailable(kind);
    if (!own.unavailable) {
      try {
        own.server = await startStoreServer(kind);
      } catch (error) {
        own.unavailable = `could not start its own ${kind} server: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    if (own.unavailable && process.env.CI)
      throw new Error(`${own.unavailable}; CI must be able to start it (redis-server, PostgreSQL's binaries)`);
  }, 120_000);
  afterAll(async () => {
    await own.server?.dispose();
  }, 60_000);
  return own;
}
