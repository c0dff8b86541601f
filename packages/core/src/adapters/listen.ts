import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Starts `server` listening on `host` and `port` (0: any free port) and answers the port it got;
 * rejects with the listen error (a port in use, a host that is not this machine's), so that a
 * page or an endpoint served over HTTP (the approval inbox, the MCP listener) fails at start.
 *
 * @example
 * const port = await listenOn(createServer(handler), 8787, "127.0.0.1");
 */
export async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
