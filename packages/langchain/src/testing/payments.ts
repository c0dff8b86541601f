// The payments story the middleware tests share: a connector whose payments need approval, an
// agent over it with a scripted fake model, and readers for interrupts and tool messages. Like the
// fixture of core's decide-pending-action test, kept apart: core's tests import no adapter code.
import { type CodemodeRuntime, type ConnectorDefinition, defineConnector } from "@codemode/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, fakeModel } from "langchain";
import { createCodemodeTool } from "../create-codemode-tool.js";
import { type CodemodeApprovalRequest, codemodeApprovalMiddleware } from "../middleware.js";

/**
 * `payments.balance` (500 EUR) and `payments.pay`, which needs approval and takes at most 100 EUR
 * (its schema); `effects` has every call that really ran.
 *
 * @example
 * const { runtime, effects } = paymentsRuntime(runtimeWith);
 */
export function paymentsRuntime(runtimeWith: (...connectors: ConnectorDefinition[]) => CodemodeRuntime) {
  const effects: string[] = [];
  const payments = defineConnector({
    name: "payments",
    tools: {
      balance: {
        execute: () => {
          effects.push("balance");
          return { eur: 500 };
        },
      },
      pay: {
        requiresApproval: true,
        inputSchema: PAY_SCHEMA,
        execute: (args: { to: string; eur: number }) => {
          effects.push(`pay ${args.to} ${args.eur}`);
          return { paid: args.eur, to: args.to };
        },
      },
    },
  });
  return { runtime: runtimeWith(payments), effects };
}

export const PAY_SCHEMA = {
  type: "object",
  properties: { to: { type: "string" }, eur: { type: "number", maximum: 100 } },
  required: ["to", "eur"],
  additionalProperties: false,
};

/** An agent over `runtime` with the Code Mode tool, its approval middleware and an in-memory checkpointer. */
export function agentWith<M extends ReturnType<typeof fakeModel>>(runtime: CodemodeRuntime, model: M) {
  const agent = createAgent({
    model,
    tools: [createCodemodeTool(runtime)],
    middleware: [codemodeApprovalMiddleware(runtime)],
    checkpointer: new MemorySaver(),
  });
  return { agent, model };
}

/** An agent whose model sends `code` once, then says what it saw in the last tool result. */
export function agentFor(runtime: CodemodeRuntime, code: string) {
  return agentWith(
    runtime,
    fakeModel()
      .respondWithTools([{ name: "codemode", args: { code }, id: "call_1" }])
      .respond((messages) => new AIMessage(`Seen: ${String(lastToolMessage(messages)?.content)}`)),
  );
}

/** A model that pays ann 1 EUR and bob 2 EUR in two Code Mode calls of one turn, then says "done". */
export function payBothModel() {
  return fakeModel()
    .respondWithTools([
      { name: "codemode", args: { code: `async () => payments.pay({ to: "ann", eur: 1 })` }, id: "call_ann" },
      { name: "codemode", args: { code: `async () => payments.pay({ to: "bob", eur: 2 })` }, id: "call_bob" },
    ])
    .respond(new AIMessage("done"));
}

export function lastToolMessage(messages: readonly BaseMessage[]): ToolMessage | undefined {
  return messages.findLast((message): message is ToolMessage => ToolMessage.isInstance(message));
}

/** The tool results the model was sent in its call `index`, parsed. */
export function resultsSeen(model: { calls: Array<{ messages: BaseMessage[] }> }, index: number): unknown[] {
  return (model.calls[index]?.messages ?? [])
    .filter((message) => ToolMessage.isInstance(message))
    .map((message) => JSON.parse(String(message.content)));
}

export type Interrupted = { __interrupt__?: Array<{ value: CodemodeApprovalRequest }> };

export function requestOf(result: unknown): CodemodeApprovalRequest {
  const request = (result as Interrupted).__interrupt__?.[0]?.value;
  if (!request) throw new Error("expected an interrupt");
  return request;
}
