/**
 * What the inbox's browser tests share: `codemode inbox` started as a child process (its address
 * read from the `--json` line it prints), and small pages of "another local site" to attack it from.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface InboxAddress {
  url: string;
  token: string;
  port: number;
}

/** Starts the bin with `args` and reads the address it prints. */
export async function startInbox(
  bin: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcessWithoutNullStreams; address: InboxAddress }> {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env, NO_COLOR: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const address = await new Promise<InboxAddress>((resolve, reject) => {
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n").find((candidate) => candidate.startsWith("{"));
      if (line) resolve(JSON.parse(line));
    });
    child.on("exit", (code) => reject(new Error(`codemode inbox exited (${code}): ${stderr}`)));
  });
  return { child, address };
}

/** Stops the inbox this test started, and waits for it to exit. */
export async function stopInbox(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A page of another local site (same host, another port), and the requests it receives. */
export async function serveHtml(
  body: string,
  onRequest?: (request: IncomingMessage) => void,
): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    onRequest?.(request);
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><html><body>${body}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
