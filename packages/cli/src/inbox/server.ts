import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { listenOn } from "@codemode/core/adapters";
import { createApprovalInbox } from "./handler.js";
import type { ApprovalInboxOptions } from "./inbox-options.js";

export interface StartApprovalInboxOptions extends Omit<ApprovalInboxOptions, "token" | "basePath"> {
  /** Default: 24 random bytes, base64url. */
  token?: string;
  /** Default 8787; 0 takes any free port. */
  port?: number;
  /** Default "127.0.0.1". Anything but loopback needs `allowRemote`. */
  host?: string;
  /** Serve on a non-loopback address. The token is then all that guards the runs: put TLS in front. */
  allowRemote?: boolean;
}

export interface RunningApprovalInbox {
  /** The address to open, token included. */
  url: string;
  token: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * Serves the approval inbox on its own HTTP server, on loopback unless told otherwise.
 *
 * @example
 * const inbox = await startApprovalInbox({ runtime });
 * console.log(`open ${inbox.url}`);
 */
export async function startApprovalInbox(options: StartApprovalInboxOptions): Promise<RunningApprovalInbox> {
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.test(host) && !options.allowRemote) {
    throw new Error(
      `the inbox binds loopback only; ${host} needs --allow-remote (and TLS in front: the token is all that guards it)`,
    );
  }
  const token = options.token ?? randomBytes(24).toString("base64url");
  const inbox = createApprovalInbox({ ...options, token });
  const server = createServer(inbox.handler);
  const port = await listenOn(server, options.port ?? 8787, host);
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/?token=${encodeURIComponent(token)}`,
    token,
    port,
    server,
    async close() {
      await inbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
