// A TCP proxy a story can close and open again, and whose connections it can cut: a store that
// goes away and comes back, as a restart does, without touching the server the suite shares.
import { connect, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** The port the proxy listens on (when open). */
  readonly port: number;
  /** Starts accepting connections again (idempotent). */
  open(): Promise<void>;
  /** Stops accepting connections and cuts every open one (idempotent). */
  close(): Promise<void>;
}

/** A proxy to 127.0.0.1:`targetPort` on a free port of its own, closed until `open()`. */
export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    port,
    async open() {
      if (server) return;
      const listening = createServer((client) => {
        const upstream = connect(targetPort, "127.0.0.1");
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => undefined);
        }
        client.pipe(upstream);
        upstream.pipe(client);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
      });
      server = listening;
      await new Promise<void>((resolve) => listening.listen(port, "127.0.0.1", resolve));
    },
    async close() {
      const listening = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (listening) await new Promise<void>((resolve) => listening.close(() => resolve()));
    },
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no free port");
  return address.port;
}
