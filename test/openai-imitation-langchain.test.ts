/**
 * A LangChain agent resumed after a restart (R-LC-2, R-RT-5): the real `ChatOpenAI` against a
 * local imitation of the OpenAI Chat Completions API (127.0.0.1), a `PostgresSaver` checkpointer
 * and a Code Mode runtime over a SQLite file. One process asks for an order and stops at the Code
 * Mode interrupt; it exits. A new process resumes the same thread with an approval: the run
 * completes, the order is placed once, and the model answers from the real result. A second story
 * pauses on two orders at once and resumes, in a new process, with an approval and an edit.
 *
 * Each process is `node test/openai-imitation/langchain-agent.ts`, importing the BUILT packages:
 * run `npm run build` before these tests (CI does). Needs PostgreSQL (CODEMODE_POSTGRES_URL,
 * default postgresql://postgres@127.0.0.1:5432/test).
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentProcessConfig } from "./openai-imitation/langchain-agent.ts";
import { type OpenAIImitation, startOpenAIImitation } from "./openai-imitation/server.ts";
import {
  orderProgram,
  programsShown,
  resultsShown,
  shopModel,
  twoMugOrdersProgram,
} from "./openai-imitation/shop-model.ts";

const AGENT = fileURLToPath(new URL("./openai-imitation/langchain-agent.ts", import.meta.url));
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

let imitation: OpenAIImitation;
let directory: string;
const schema = `codemode_lc_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
beforeAll(async () => {
  imitation = await startOpenAIImitation(shopModel);
  directory = mkdtempSync(join(tmpdir(), "codemode-langchain-restart-"));
});
afterAll(async () => {
  await imitation.close();
  rmSync(directory, { recursive: true, force: true });
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

/**
 * Runs one agent process to its end (it must exit by itself) and returns the JSON line it printed.
 * Each process loads LangChain and the store afresh (seconds on a busy machine): a test that runs
 * three of them has a limit of three such processes' bound.
 */
function runAgent(step: "start" | "resume", config: AgentProcessConfig): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [AGENT, step, JSON.stringify(config)], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${step} failed: ${error.message}\n${stderr}`));
      const line = stdout.trim().split("\n").at(-1) ?? "";
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

describe("LangChain: pause, restart, resume from a persistent checkpointer (real ChatOpenAI, PostgresSaver)", () => {
  it("R-LC-2 R-RT-5: a new process resumes the interrupted thread; the order is placed once and the model sees its result", async () => {
    const effectsPath = join(directory, "orders.jsonl");
    writeFileSync(effectsPath, "");
    const config: AgentProcessConfig = {
      baseURL: imitation.baseURL,
      postgresUrl: POSTGRES_URL,
      schema,
      sqlitePath: join(directory, "codemode.sqlite"),
      effectsPath,
      threadId: "order-42",
    };

    const started = await runAgent("start", config);
    expect(started).toMatchObject({
      interrupted: true,
      pending: [{ connector: "shop", method: "create_order", args: { sku: "mug-logo", quantity: 2 } }],
    });
    expect(readFileSync(effectsPath, "utf8")).toBe("");
    expect(imitation.requests.map((request) => request.api)).toEqual(["chat"]);

    // The first process is gone; a second one, with new objects everywhere, resumes the thread.
    const resumed = await runAgent("resume", config);
    expect(resumed).toMatchObject({ interrupted: false, pending: [], answer: "Order ord-1 is placed (total 18)." });
    const orders = readFileSync(effectsPath, "utf8").trim().split("\n");
    expect(orders).toHaveLength(1);
    expect(JSON.parse(orders[0]!)).toMatchObject({ sku: "mug-logo", quantity: 2 });

    // What ChatOpenAI sent after the resume: the program and its completed result, once each.
    const sent = imitation.requests.at(-1)!;
    expect(programsShown(sent.items)).toEqual([orderProgram]);
    expect(resultsShown(sent.items)).toMatchObject([{ status: "completed", result: { orderId: "ord-1", total: 18 } }]);

    // A second resume of the same thread says there is nothing to resume; nothing runs again.
    expect(await runAgent("resume", config)).toMatchObject({ code: "NO_INTERRUPT" });
    expect(readFileSync(effectsPath, "utf8").trim().split("\n")).toHaveLength(1);
  }, 180_000);

  it("R-AP-8 R-AP-9 R-LC-2: an interrupt with two actions, resumed with approve and edit after a process restart from the persistent checkpointer", async () => {
    const effectsPath = join(directory, "two-orders.jsonl");
    writeFileSync(effectsPath, "");
    const config: AgentProcessConfig = {
      baseURL: imitation.baseURL,
      postgresUrl: POSTGRES_URL,
      schema,
      sqlitePath: join(directory, "codemode-two-orders.sqlite"),
      effectsPath,
      threadId: "two-orders-7",
      prompt: "Please place two orders at once: two logo mugs for the office and five for the shop.",
    };
    const before = imitation.requests.length;

    const started = await runAgent("start", config);
    expect(started).toMatchObject({
      interrupted: true,
      pending: [
        { connector: "shop", method: "create_order", args: { sku: "mug-logo", quantity: 2 } },
        { connector: "shop", method: "create_order", args: { sku: "mug-logo", quantity: 5 } },
      ],
      actionRequests: [
        { name: "shop.create_order", args: { sku: "mug-logo", quantity: 2 } },
        { name: "shop.create_order", args: { sku: "mug-logo", quantity: 5 } },
      ],
    });
    expect(started.reviewConfigs).toEqual([
      expect.objectContaining({ allowedDecisions: ["approve", "edit", "reject"], argsSchema: expect.any(Object) }),
      expect.objectContaining({ allowedDecisions: ["approve", "edit", "reject"], argsSchema: expect.any(Object) }),
    ]);
    expect(readFileSync(effectsPath, "utf8")).toBe("");
    expect(imitation.requests.length - before).toBe(1);

    // A new process decides both in one resume: the first as asked, the second with three mugs.
    const resumed = await runAgent("resume", {
      ...config,
      decisions: [
        { type: "approve", by: "ops" },
        {
          type: "edit",
          editedAction: { name: "shop.create_order", args: { sku: "mug-logo", quantity: 3 } },
          by: "ops",
        },
      ],
    });
    expect(resumed).toMatchObject({
      interrupted: false,
      pending: [],
      answer: expect.stringMatching(/^Orders ord-\d and ord-\d are placed \(2 and 3 mugs\)\.$/),
    });
    const orders = readFileSync(effectsPath, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(orders.map((order) => order.quantity).sort()).toEqual([2, 3]);
    expect(new Set(orders.map((order) => order.key)).size).toBe(2);

    // The next request to the model: the program once and its completed run, with both orders' results.
    expect(imitation.requests.length - before).toBe(2);
    const sent = imitation.requests.at(-1)!;
    expect(programsShown(sent.items)).toEqual([twoMugOrdersProgram]);
    expect(resultsShown(sent.items)).toEqual([
      expect.objectContaining({
        status: "completed",
        result: { orderIds: expect.arrayContaining(["ord-1", "ord-2"]), quantities: [2, 3] },
      }),
    ]);

    // Resuming again finds nothing to decide; no order is placed twice.
    expect(await runAgent("resume", config)).toMatchObject({ code: "NO_INTERRUPT" });
    expect(readFileSync(effectsPath, "utf8").trim().split("\n")).toHaveLength(2);
  }, 180_000);
});
