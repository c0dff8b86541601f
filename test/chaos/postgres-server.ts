/**
 * A PostgreSQL for the chaos tests, a cluster of its own on its own port and data folder: it keeps
 * every acknowledged write through a kill of its process, since it commits to its WAL before it
 * answers (`synchronous_commit` on; `fsync` off, since the OS page cache outlives the process).
 */
import { execFileSync, spawn } from "node:child_process";
import { chownSync, closeSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { managedServer, type StoreServer, withRemoval } from "./managed-server.ts";

/**
 * The folder of PostgreSQL's binaries: CODEMODE_PG_BIN, else `pg_config --bindir`, else Debian's
 * newest `/usr/lib/postgresql/<version>/bin`.
 */
export function postgresBin(): string {
  if (process.env.CODEMODE_PG_BIN) return process.env.CODEMODE_PG_BIN;
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    if (versions[0] === undefined) throw new Error("no PostgreSQL in /usr/lib/postgresql and no pg_config");
    return join("/usr/lib/postgresql", versions[0], "bin");
  }
}

/** PostgreSQL refuses to run as root: as root, its processes run as the `postgres` OS user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/** A new cluster in `root` (as the `postgres` OS user when we are root), served on `port`. */
export async function postgresServer(root: string, port: number): Promise<StoreServer> {
  const bin = postgresBin();
  const user = postgresUser();
  const dir = join(root, "data");
  mkdirSync(dir, { mode: 0o700 });
  if (user) chownSync(dir, user.uid, user.gid);
  const asUser = { cwd: root, ...(user ?? {}), env: { ...process.env, LC_ALL: "C" } };
  execFileSync(
    join(bin, "initdb"),
    ["-D", dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
    { ...asUser, stdio: "ignore" },
  );
  const logFile = join(root, "postgres.log");
  const settings = [
    ["listen_addresses", "127.0.0.1"],
    ["unix_socket_directories", dir],
    ["fsync", "off"],
    ["full_page_writes", "off"],
    ["max_connections", "400"],
    ["shared_buffers", "64MB"],
  ];
  const server = managedServer(
    "postgres",
    `postgresql://postgres@127.0.0.1:${port}/postgres`,
    logFile,
    () => {
      const log = openSync(logFile, "a");
      try {
        return spawn(
          join(bin, "postgres"),
          ["-D", dir, "-p", String(port), ...settings.flatMap(([name, value]) => ["-c", `${name}=${value}`])],
          { ...asUser, detached: true, stdio: ["ignore", log, log] },
        );
      } finally {
        closeSync(log);
      }
    },
    async () => {
      execFileSync(join(bin, "pg_ctl"), ["stop", "-D", dir, "-m", "fast", "-w", "-t", "30"], {
        ...asUser,
        stdio: "ignore",
      });
    },
    () => postgresAnswers(port),
  );
  return withRemoval(server, root);
}

export async function postgresAnswers(port: number): Promise<boolean> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: "postgres",
    database: "postgres",
    connectionTimeoutMillis: 1_000,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
