/**
 * A Redis for the chaos tests, on its own port and data folder: it keeps every acknowledged write
 * through a kill of its process, since it appends to its AOF before it answers
 * (`appendfsync always`).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { managedServer, type StoreServer, withRemoval } from "./managed-server.ts";

/** Redis on `port`, its data and log in `root`. */
export function redisServer(root: string, port: number): StoreServer {
  const dir = join(root, "data");
  mkdirSync(dir);
  const logFile = join(root, "redis.log");
  const settings = [
    ["port", String(port)],
    ["bind", "127.0.0.1"],
    ["dir", dir],
    ["logfile", logFile],
    ["appendonly", "yes"],
    ["appendfsync", "always"],
    ["save", ""],
    ["maxmemory-policy", "noeviction"],
    ["protected-mode", "no"],
  ];
  const server = managedServer(
    "redis",
    `redis://127.0.0.1:${port}`,
    logFile,
    () =>
      spawn(
        "redis-server",
        settings.flatMap(([name, value]) => [`--${name}`, value as string]),
        { detached: true, stdio: "ignore" },
      ),
    async () => {
      // Fails when the server is already gone; the stop then kills whatever is left.
      execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "shutdown", "nosave"], { stdio: "ignore" });
    },
    () => redisAnswers(port),
  );
  return withRemoval(server, root);
}

/** True once the server answers PING with PONG (not LOADING, not a refused connection). */
export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (chunk) => done(chunk.toString().startsWith("+PONG")));
  });
}
