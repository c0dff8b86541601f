/**
 * What the inbox's browser tests share: `codemode inbox` started as a child process (its address
 * read from the `--json` line it prints) over a SQLite file of `tickets` runs, with headless
 * Chromium beside it (useBrowserInbox), and small pages of "another local site" to attack it from.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CodemodeRuntime } from "@codemode/core";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { openTicketsRuntime } from "./cli-fixtures/tickets.ts";

const BIN = fileURLToPath(new URL("../packages/cli/dist/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./cli-fixtures/codemode.config.ts", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** How long a browser test, and the start and stop of the inbox and Chromium, may take. */
export const TIMEOUT = 180_000;

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

/** What useBrowserInbox started, once the file's beforeAll has run: the runtime the runs are made with. */
export let runtime: CodemodeRuntime;
/** The inbox's address (its url carries the token). */
export let address: InboxAddress;
/** Headless Chromium. */
export let browser: Browser;

/**
 * Before the file's tests: a fresh SQLite file of `tickets` runs (`runtime`, named "inbox"),
 * `codemode inbox` over it (operator "ops", polling every 300 ms, at `address`) and headless
 * Chromium (`browser`); after them, all stopped and the file removed.
 */
export function useBrowserInbox(): void {
  const directory = mkdtempSync(join(tmpdir(), "codemode-inbox-"));
  const store = `sqlite:${join(directory, "runs.sqlite")}`;
  let closeRuntime: (() => Promise<void>) | undefined;
  let inbox: ChildProcessWithoutNullStreams | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get update && apt-get install -y chromium (or set CHROMIUM_PATH)`);
    const opened = openTicketsRuntime(store, "inbox");
    ({ runtime, close: closeRuntime } = opened);
    const started = await startInbox(
      BIN,
      ["--config", CONFIG, "inbox", "--port", "0", "--poll", "300ms", "--operator", "ops", "--json"],
      { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: "inbox" },
    );
    ({ child: inbox, address } = started);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  }, TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    if (inbox) await stopInbox(inbox);
    await closeRuntime?.();
    rmSync(directory, { recursive: true, force: true });
  }, TIMEOUT);
}

/** A run's card on an inbox page. */
export const card = (page: Page, executionId: string) => page.locator(`#run-${executionId}`);
