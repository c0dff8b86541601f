/**
 * One process of a LangChain app that takes orders, for test/openai-imitation-langchain.test.ts:
 * `createAgent` with the real `ChatOpenAI` (pointed at the local OpenAI imitation), the Code Mode
 * tool and approval middleware, a `PostgresSaver` checkpointer and a runtime over a SQLite file —
 * everything a restart must not lose lives outside the process. It imports the BUILT packages
 * (run `npm run build` first), as a deployed app would.
 *
 *   node test/openai-imitation/langchain-agent.ts start  '<config JSON>'   # "Please order two logo mugs." (or config.prompt) → interrupt
 *   node test/openai-imitation/langchain-agent.ts resume '<config JSON>'   # approve (or config.decisions), in a new process
 *
 * It prints one JSON line with what happened and exits with process.exit (R-RT-5).
 */
import { appendFileSync, readFileSync } from "node:fs";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { createCodemodeTool } from "@codemode/langchain";
import {
  type CodemodeApprovalDecision,
  type CodemodeApprovalRequest,
  codemodeApprovalMiddleware,
  resumeCodemodeApproval,
} from "@codemode/langchain/middleware";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";

export interface AgentProcessConfig {
  baseURL: string;
  postgresUrl: string;
  /** The PostgreSQL schema of the checkpointer's tables. */
  schema: string;
  sqlitePath: string;
  /** One line is appended per order really placed. */
  effectsPath: string;
  threadId: string;
  /** What the user asks at `start`. Default "Please order two logo mugs.". */
  prompt?: string;
  /** What `resume` answers, one decision per action request. Default one approval by "ops". */
  decisions?: CodemodeApprovalDecision[];
}

const [step, configText] = process.argv.slice(2);
const config = JSON.parse(configText ?? "{}") as AgentProcessConfig;

const catalog = defineConnector({
  name: "catalog",
  instructions: "Read-only product catalog.",
  tools: {
    search_products: {
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      execute: (args: { query: string }) =>
        [{ sku: "mug-logo", name: "Logo mug", price: 9 }].filter((product) =>
          product.name.toLowerCase().includes(args.query),
        ),
    },
  },
});
const shop = defineConnector({
  name: "shop",
  instructions: "Places orders; every order needs a human's approval.",
  tools: {
    create_order: {
      requiresApproval: true,
      // Edited arguments are checked against it too (R-AP-9).
      inputSchema: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1, maximum: 10 } },
        required: ["sku", "quantity"],
        additionalProperties: false,
      },
      execute: (args: { sku: string; quantity: number }, context) => {
        appendFileSync(config.effectsPath, `${JSON.stringify({ ...args, key: context.idempotencyKey })}\n`);
        // ord-1 for the first order in the effects file, ord-2 for the next, …
        const placed = readFileSync(config.effectsPath, "utf8").trim().split("\n").length;
        return { orderId: `ord-${placed}`, ...args };
      },
    },
  },
});

const storage = sqliteStorage(config.sqlitePath);
const runtime = createCodemodeRuntime({ connectors: [catalog, shop], storage, limits: { timeoutMs: 10_000 } });
const checkpointer = PostgresSaver.fromConnString(config.postgresUrl, { schema: config.schema });
await checkpointer.setup();
const agent = createAgent({
  model: new ChatOpenAI({
    model: "gpt-4.1-mini",
    apiKey: "imitation",
    configuration: { baseURL: config.baseURL },
    maxRetries: 0,
  }),
  tools: [createCodemodeTool(runtime)],
  middleware: [codemodeApprovalMiddleware(runtime)],
  checkpointer,
});
const thread = { configurable: { thread_id: config.threadId } };

let report: Record<string, unknown>;
try {
  if (step === "start") {
    const content = config.prompt ?? "Please order two logo mugs.";
    const result = await agent.invoke({ messages: [{ role: "user", content }] }, thread);
    const request = result.__interrupt__?.[0]?.value as CodemodeApprovalRequest | undefined;
    report = {
      interrupted: Boolean(request),
      pending: request?.pending ?? [],
      actionRequests: request?.actionRequests ?? [],
      reviewConfigs: request?.reviewConfigs ?? [],
    };
  } else {
    const decisions = config.decisions ?? [{ type: "approve", by: "ops" }];
    const result = await resumeCodemodeApproval(agent, { decisions }, thread);
    const last = result.messages.at(-1);
    report = {
      interrupted: Boolean(result.__interrupt__?.length),
      answer: last?.content,
      pending: await runtime.pending().then((page) => page.items),
    };
  }
} catch (error) {
  report = { error: String(error), code: (error as { code?: unknown }).code };
}
process.stdout.write(`${JSON.stringify(report)}\n`);
await checkpointer.end();
await runtime.close();
await storage.close();
process.exit(0);
