/**
 * R-CON-5 over real transports: the `codemode-mcp` bin as a child process over stdio (it imports
 * the BUILT packages: run `npm run build` first, as CI does), and Streamable HTTP on 127.0.0.1.
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { acceptAll, agentClient, DELETE_TWO, notesRuntime, structuredOf } from "./mcp-fixtures/codemode-setup.ts";

const BIN = fileURLToPath(new URL("../packages/core/dist/mcp/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./mcp-fixtures/stdio-config.ts", import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  return structuredOf(await client.callTool({ name, arguments: args }));
}

describe("codemode-mcp over stdio (a child process)", () => {
  function launch(flags: string[], answer?: Parameters<typeof agentClient>[0]) {
    const { client, asked } = agentClient(answer);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "--config", CONFIG, ...flags],
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    cleanups.push(() => client.close());
    return { client, asked, transport, stderr: () => stderr };
  }

  it("serves the config's runtime; with --elicitation a pause is approved by the person through elicitation", async () => {
    const { client, asked, transport, stderr } = launch(["--elicitation"], acceptAll());
    await client.connect(transport);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["search", "describe", "execute"]);
    expect(await callTool(client, "describe", { target: "notes.delete_note" })).toMatchObject({
      requiresApproval: true,
    });
    expect(await callTool(client, "execute", { code: DELETE_TWO })).toMatchObject({ status: "completed", result: 0 });
    expect(asked).toHaveLength(2);
    expect(stderr()).toContain("this line must not reach stdout");
  });

  it("with --operator-tools and --no-elicitation: pause → pending → approve, even for a client that could be asked", async () => {
    const { client, transport } = launch(["--operator-tools", "--no-elicitation"], () => ({ action: "decline" }));
    await client.connect(transport);
    const paused = await callTool(client, "execute", { code: DELETE_TWO });
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 2 }] });
    expect((await callTool(client, "pending", {})).items).toHaveLength(1);
    expect(await callTool(client, "approve", { executionId: paused.executionId, seq: 2 })).toMatchObject({
      status: "paused",
      pending: [{ seq: 3 }],
    });
    expect(await callTool(client, "approve", { executionId: paused.executionId, seq: 3 })).toMatchObject({
      status: "completed",
      result: 0,
    });
  });

  it("exits when the client closes its stdin, even with a run left paused (R-RT-5)", async () => {
    const { client, transport } = launch(["--no-elicitation"]);
    await client.connect(transport);
    const pid = transport.pid!;
    expect(await callTool(client, "execute", { code: DELETE_TWO })).toMatchObject({ status: "paused" });
    const started = Date.now();
    await client.close();
    // The SDK's transport ends stdin, waits 2 s, then sends SIGTERM: a quick close means the bin left by itself.
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(isAlive(pid)).toBe(false);
  });
});

describe("the codemode-mcp bin's first message (issue 43: it decides the protocol)", () => {
  it("R-RT-5: a client that closes stdin before sending anything leaves no server behind", async () => {
    const child = spawn(process.execPath, [BIN, "--config", CONFIG], { stdio: ["pipe", "ignore", "ignore"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.stdin.end();
    const code = await Promise.race([
      exited,
      new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 20_000)),
    ]);
    if (code === "hung") child.kill("SIGKILL");
    expect(code).toBe(0);
  });
});

describe("createCodemodeMcpServer over Streamable HTTP (127.0.0.1)", () => {
  async function listen(operatorTools = false) {
    const setup = await notesRuntime();
    const mcp = createCodemodeMcpServer(setup.runtime, { operatorTools, elicitApproval: !operatorTools });
    const listener = await mcp.listen();
    cleanups.push(setup.close, mcp.close);
    return { ...setup, mcp, listener };
  }

  async function connect(url: URL, answer?: Parameters<typeof agentClient>[0]) {
    const { client, asked } = agentClient(answer);
    await client.connect(new StreamableHTTPClientTransport(url));
    cleanups.push(() => client.close());
    return { client, asked };
  }

  it("binds loopback by default; a session per client; elicitation accept and decline on the call's stream", async () => {
    const { listener, notes } = await listen();
    expect(listener.url.hostname).toBe("127.0.0.1");
    expect(listener.url.pathname).toBe("/mcp");
    const { client: declining } = await connect(listener.url, () => ({ action: "decline" }));
    expect(await callTool(declining, "execute", { code: DELETE_TWO })).toMatchObject({ status: "rejected" });
    expect(notes.size).toBe(2);
    const { client: accepting, asked } = await connect(listener.url, acceptAll());
    expect(await callTool(accepting, "search", { query: "delete a note" })).toMatchObject({
      results: expect.arrayContaining([expect.objectContaining({ path: "notes.delete_note" })]),
    });
    expect(await callTool(accepting, "execute", { code: DELETE_TWO })).toMatchObject({
      status: "completed",
      result: 2,
    });
    expect(asked).toHaveLength(2);
    expect(listener.sessions()).toBe(2);
  });

  it("pause → pending → approve through the operator tools", async () => {
    const { listener } = await listen(true);
    const { client } = await connect(listener.url);
    const paused = await callTool(client, "execute", {
      code: `async () => { const { id } = await notes.add_note({ title: "x" }); await notes.delete_note({ id }); return "gone"; }`,
    });
    expect(paused).toMatchObject({ status: "paused" });
    expect((await callTool(client, "pending", { executionId: paused.executionId })).items).toEqual([
      expect.objectContaining({ method: "delete_note", seq: 1 }),
    ]);
    expect(await callTool(client, "approve", { executionId: paused.executionId, seq: 1 })).toMatchObject({
      status: "completed",
      result: "gone",
    });
  });

  it("refuses a request whose Host is not loopback, and a non-loopback address without allowRemote", async () => {
    const { listener, mcp } = await listen();
    const status = await new Promise<number>((resolve, reject) => {
      const sent = request(
        listener.url,
        {
          method: "POST",
          headers: { host: `attacker.example:${listener.url.port}`, "content-type": "application/json" },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      sent.on("error", reject);
      sent.end("{}");
    });
    expect(status).toBe(403);
    await expect(mcp.listen({ host: "0.0.0.0" })).rejects.toThrow(/not a loopback address/);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
