import { connect } from "node:net";

/**
 * Why nothing answers at the host and port of `url` (e.g. "redis://127.0.0.1:6379",
 * "postgresql://127.0.0.1:5432/test"), or undefined when a TCP connection opens. Made for the
 * `unavailable` option of `runStorageConformance`.
 *
 * @example
 * runStorageConformance("redis", () => redisStorage(url), { unavailable: () => tcpUnreachable(url) });
 */
export function tcpUnreachable(url: string, timeoutMs = 2_000): Promise<string | undefined> {
  const parsed = new URL(url);
  const defaults: Record<string, number> = {
    "redis:": 6379,
    "rediss:": 6379,
    "postgres:": 5432,
    "postgresql:": 5432,
    "mysql:": 3306,
  };
  const port = parsed.port ? Number(parsed.port) : defaults[parsed.protocol];
  const host = parsed.hostname || "127.0.0.1";
  if (port === undefined) return Promise.resolve(`no port in ${url}`);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(timeoutMs, () => finish(`nothing answered at ${host}:${port} within ${timeoutMs} ms`));
    socket.once("error", (error) => finish(`cannot connect to ${host}:${port}: ${error.message}`));
    socket.once("connect", () => finish(undefined));
  });
}
