/**
 * An MCP elicitation answer decides the pause the person was asked about, and no later one
 * (R-AP-9), through the official SDK client: while the person looks at the form, elsewhere the
 * call is approved, the host dies inside it (`onInterrupted: "ask"`) and the run asks about it
 * again. The answer that then arrives, Approve, is for the earlier pause: nothing is charged
 * again, and the client is told why.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";
import { agentClient, structuredOf } from "./mcp-fixtures/codemode-setup.ts";
import { connectInMemory } from "./mcp-fixtures/notes-server.ts";
import { cardCharger, crashInside } from "./pause-fixtures.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("MCP elicitation and the pause it answers (R-AP-9)", () => {
  it("R-AP-9: an answer that arrives after the call was asked again decides nothing, and the client is told why", async () => {
    const { connector: payments, charged } = cardCharger();
    const keyv = new Keyv();
    const runtime: CodemodeRuntime = createCodemodeRuntime({
      connectors: [payments],
      storage: keyv,
      logger: { warn() {} },
    });
    cleanups.push(() => runtime.close());
    let asked = 0;
    const { client } = agentClient(async (request) => {
      asked++;
      if (asked > 1) return { action: "cancel" };
      // While the form is open: approved elsewhere, charged, the host dies inside the charge, and
      // the resumed run (the second charge approved too) asks about the first again.
      const [action] = (await runtime.pending()).items;
      const { executionId } = action!;
      await runtime.approve({ executionId, seq: 0, by: "ops" });
      await crashInside(keyv, executionId, 0);
      await runtime.approve({ executionId, seq: 1, by: "ops" });
      const { properties } = (request as ElicitRequestFormParams).requestedSchema;
      const property = Object.keys(properties).find((name) => name.startsWith("seq_"))!;
      return { action: "accept", content: { [property]: "approve" } };
    });
    const mcp = createCodemodeMcpServer(runtime, { elicitApproval: true });
    await connectInMemory(mcp, client);
    cleanups.push(mcp.close, () => client.close());

    const answer = structuredOf(
      await client.callTool({
        name: "execute",
        arguments: {
          code: `async () => [(await payments.charge({ card: "visa" })).charged, (await payments.charge({ card: "amex" })).charged]`,
        },
      }),
    );
    expect(answer).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
      error: expect.stringContaining(
        "seq 0 (payments.charge) was asked again since this answer was given (it answers pause 0.1; the call now waits in pause 0.2)",
      ),
    });
    expect(charged).toEqual(["visa"]);
    const state = await runtime.execution(String(answer.executionId));
    expect(state?.log[0]).toMatchObject({ state: "pending", pauseId: "0.2" });
  });
});
