/**
 * The chaos tests' own store servers: a Redis or a PostgreSQL on a free port, its data in a temp
 * folder, which a test stops cleanly, kills and starts again on the same port and data. Whatever
 * happens to the test, the servers die with its process and their folders are removed
 * (managed-server.ts; each kind in redis-server.ts and postgres-server.ts).
 *
 * Both keep every acknowledged write through a kill of the server process (not of the machine):
 * Redis appends to its AOF before it answers (`appendfsync always`), PostgreSQL commits to its WAL
 * before it answers (`synchronous_commit` on; `fsync` off, since the OS page cache outlives the process).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeOnExit, type StoreServer } from "./managed-server.ts";
import { postgresBin, postgresServer } from "./postgres-server.ts";
import { redisServer } from "./redis-server.ts";

/** Why this machine cannot run such a server (a missing binary), or undefined when it can. */
export function serverUnavailable(kind: StoreServer["kind"]): string | undefined {
  try {
    if (kind === "redis") execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    else execFileSync(join(postgresBin(), "postgres"), ["--version"], { stdio: "ignore" });
    return undefined;
  } catch (error) {
    return `cannot run ${kind === "redis" ? "redis-server" : "postgres"}: ${(error as Error).message}`;
  }
}

/** Creates the server's folder (and, for PostgreSQL, its cluster) and starts it. */
export async function startStoreServer(kind: StoreServer["kind"]): Promise<StoreServer> {
  const root = mkdtempSync(join(tmpdir(), `codemode-chaos-${kind}-`));
  // PostgreSQL runs as its own OS user when we are root; it must reach its data directory.
  chmodSync(root, 0o755);
  removeOnExit(root);
  const port = await freePort();
  const server = kind === "redis" ? redisServer(root, port) : await postgresServer(root, port);
  await server.start();
  return server;
}

/** A port nothing listens on now (the OS's pick); the server keeps it across restarts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
