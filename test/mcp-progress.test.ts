/**
 * Issue 27, progress: a client that sends a progressToken hears each call start and end, the
 * program's console lines and the pause while `execute` goes on; in memory as a plain call, and
 * over stdio as a task (the `codemode-mcp` bin imports the BUILT packages: build first).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCodemodeRuntime } from "@codemode/core";
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, CreateTaskResultSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ExecutionState, LogEntry } from "../packages/core/src/index.ts";
import { startProgress } from "../packages/core/src/mcp/progress.ts";
import { scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";
import { GATED_PROGRAM, tickets } from "./cli-fixtures/tickets.ts";
import { structuredOf } from "./mcp-fixtures/codemode-setup.ts";

const BIN = fileURLToPath(new URL("../packages/core/dist/mcp/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./mcp-fixtures/tasks-config.ts", import.meta.url));

/** Twenty calls, a console line with a bidi override in it, then the count. */
const TWENTY_CALLS = `async () => {
  let found = 0;
  for (let i = 0; i < 20; i++) found += (await tickets.list({ status: "s" + i })).length;
  console.log("found \\u202e" + found);
  return found;
}`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connectInMemory(): Promise<Client> {
  const runtime = createCodemodeRuntime({ connectors: [tickets] });
  const mcp = createCodemodeMcpServer(runtime);
  const client = new Client({ name: "progress-test-client", version: "1.0.0" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await mcp.close();
    await runtime.close();
  });
  return client;
}

/** Each call's start comes before its end, and the seqs are 0..19; progress strictly increases. */
function expectTwentyCalls(notes: Progress[]): void {
  const messages = notes.map((note) => String(note.message));
  for (let seq = 0; seq < 20; seq++) {
    const start = messages.indexOf(`call started: tickets.list (seq ${seq})`);
    const end = messages.indexOf(`call ended: tickets.list (seq ${seq}, applied)`);
    expect(start, `start of seq ${seq}`).toBeGreaterThanOrEqual(0);
    expect(end, `end of seq ${seq}`).toBeGreaterThan(start);
    if (seq > 0) expect(start).toBeGreaterThan(messages.indexOf(`call started: tickets.list (seq ${seq - 1})`));
  }
  expect(messages.filter((message) => message.startsWith("call "))).toHaveLength(40);
  const progress = notes.map((note) => note.progress);
  for (let index = 1; index < progress.length; index++)
    expect(progress[index]).toBeGreaterThan(progress[index - 1] ?? 0);
}

describe("issue 27: execute reports progress in memory", () => {
  it("a 20-call program: each call started then ended, seqs 0..19, the console line cleaned, before the answer", async () => {
    const client = await connectInMemory();
    const notes: Progress[] = [];
    const result = await client.callTool({ name: "execute", arguments: { code: TWENTY_CALLS } }, CallToolResultSchema, {
      onprogress: (note) => notes.push(note),
    });
    expect(structuredOf(result)).toMatchObject({ status: "completed", result: 20 });
    expectTwentyCalls(notes);
    expect(notes.map((note) => note.message)).toContain("console: found  20");
  });

  it("a program that pauses says so once, naming the pending call; its answer is today's", async () => {
    const client = await connectInMemory();
    const notes: Progress[] = [];
    const result = await client.callTool(
      { name: "execute", arguments: { code: GATED_PROGRAM } },
      CallToolResultSchema,
      {
        onprogress: (note) => notes.push(note),
      },
    );
    const answer = structuredOf(result);
    expect(answer).toMatchObject({ status: "paused", pending: [{ connector: "tickets", method: "create" }] });
    expect(answer.message).toContain(`codemode approve ${answer.executionId}`);
    const messages = notes.map((note) => note.message);
    expect(messages).toEqual([
      "call started: tickets.list (seq 0)",
      "call ended: tickets.list (seq 0, applied)",
      "call started: tickets.create (seq 1)",
      "paused: waiting for approval of tickets.create (seq 1)",
    ]);
  });

  it("without a progressToken nothing is sent", async () => {
    const client = await connectInMemory();
    const heard: unknown[] = [];
    client.fallbackNotificationHandler = async (notification) => {
      heard.push(notification);
    };
    client.onerror = (error) => heard.push(error);
    const result = await client.callTool({ name: "execute", arguments: { code: TWENTY_CALLS } });
    expect(structuredOf(result)).toMatchObject({ status: "completed", result: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toEqual([]);
  });
});

describe("issue 27: execute as a task reports progress over stdio", () => {
  it(
    "the task's progress goes on after the CreateTaskResult, in order, to the end of the run",
    async () => {
      const directory = scratchDirectory();
      const client = new Client({ name: "progress-test-client", version: "1.0.0" });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, "--config", CONFIG],
        env: {
          ...(process.env as Record<string, string>),
          CODEMODE_TEST_STORE: `sqlite:${join(directory, "progress.sqlite")}`,
          CODEMODE_TEST_NAME: `mcp-progress-${randomUUID().slice(0, 8)}`,
        },
        stderr: "pipe",
      });
      cleanups.push(() => client.close());
      await client.connect(transport);
      const notes: Progress[] = [];
      const created = await client.request(
        { method: "tools/call", params: { name: "execute", arguments: { code: TWENTY_CALLS } } },
        CreateTaskResultSchema,
        { task: { ttl: 3_600_000 }, onprogress: (note) => notes.push(note) },
      );
      for (let attempt = 0; attempt < 200 && !notes.some((note) => note.message?.startsWith("console:")); attempt++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expectTwentyCalls(notes);
      const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(structuredOf(result)).toMatchObject({ status: "completed", result: 20 });
    },
    TIMEOUT,
  );
});

describe("startProgress, over a run read from the store", () => {
  const call = (seq: number, state: LogEntry["state"]): LogEntry => ({
    seq,
    connector: "tickets",
    method: "list",
    args: {},
    requiresApproval: false,
    state,
    startedAt: 0,
  });
  const run = (status: ExecutionState["status"], log: LogEntry[], logs?: string[]): ExecutionState => ({
    id: "run-1",
    code: "",
    status,
    log,
    connectors: ["tickets"],
    createdAt: 0,
    updatedAt: 0,
    ...(logs ? { logs } : {}),
  });

  it("reports a call as it starts, then as it ends, while the run goes on; console lines are bounded", async () => {
    const reads = [
      run("running", [call(0, "executing")]),
      run("running", [call(0, "applied"), call(1, "executing")], ["a"]),
      run("completed", [call(0, "applied"), call(1, "error")], ["a", "b\u0007c", "x".repeat(500), "d"]),
    ];
    const sent: Array<{ progress: number; message: string }> = [];
    const runtime = { execution: async () => reads.shift() ?? null };
    const stop = startProgress({
      runtime,
      executionId: "run-1",
      pollMs: 5,
      maxConsoleLines: 3,
      maxLineLength: 10,
      send: async (note) => {
        sent.push(note);
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await stop();
    expect(sent.map((note) => note.message)).toEqual([
      "call started: tickets.list (seq 0)",
      "call ended: tickets.list (seq 0, applied)",
      "call started: tickets.list (seq 1)",
      "console: a",
      "call ended: tickets.list (seq 1, error)",
      "console: b c",
      "console: xxxxxxxxx…",
      "console: further lines are not sent as progress",
    ]);
    expect(sent.map((note) => note.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("a store error or a failed send ends it quietly", async () => {
    const failing = startProgress({
      runtime: {
        execution: async () => {
          throw new Error("store down");
        },
      },
      executionId: "run-1",
      pollMs: 5,
      send: async () => undefined,
    });
    await expect(failing()).resolves.toBeUndefined();
    let reads = 0;
    let sends = 0;
    const closed = startProgress({
      runtime: {
        execution: async () => {
          reads += 1;
          return run("running", [call(reads, "applied")]);
        },
      },
      executionId: "run-1",
      pollMs: 5,
      send: async () => {
        sends += 1;
        throw new Error("Not connected");
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await closed();
    expect({ reads, sends }).toEqual({ reads: 1, sends: 1 });
  });
});
