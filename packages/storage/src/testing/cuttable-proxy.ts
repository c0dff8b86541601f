import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a real server, for outage tests: `cut()` drops every open
 * connection and refuses new ones, as a server that went away would; `restore()` listens again.
 */
export interface CuttableProxy {
  /** The target URL with its host and port replaced by the proxy's. */
  readonly url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function cuttableProxy(targetUrl: string): Promise<CuttableProxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const listen = async () => {
    server = createServer((client) => {
      const upstream = connect({ host: target.hostname, port: targetPort });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  };
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    const closing = server;
    server = undefined;
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  await listen();
  const proxied = new URL(targetUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(port);
  return { url: proxied.toString(), cut: stop, restore: listen, close: stop };
}
