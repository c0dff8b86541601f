import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema, ToolDefinition } from "../connectors/define-connector.js";
import { isSdk2Client, type McpClientSdk2 } from "./sdk2-client.js";
import { callToolWithSdk2 } from "./sdk2-tool-call.js";
import { unwrapToolResult } from "./unwrap-tool-result.js";
import { callToolAsTask, type McpTaskClient, runsAsTask } from "./upstream-task.js";

/** The parts of an SDK 1 `Client` (`@modelcontextprotocol/sdk`) a connector uses (the task parts only for servers that run tools as tasks). */
export type McpClientSdk1 = Pick<Client, "listTools" | "callTool" | "setNotificationHandler" | "getInstructions"> &
  McpTaskClient;

/**
 * A connected MCP client: a `Client` of `@modelcontextprotocol/sdk` (SDK 1) or of
 * `@modelcontextprotocol/client` (SDK 2), told apart by what they have, not by their class.
 */
export type McpClient = McpClientSdk1 | McpClientSdk2;

/**
 * Which MCP tools pause for approval unless the `tool` option says otherwise:
 * - "unless-read-only" (default): every tool not annotated `readOnlyHint: true` or
 *   `destructiveHint: false`: the MCP specification's own defaults, under which a tool without
 *   hints may be destructive. A server is not trusted to leave its hints out only when harmless;
 * - "destructive": only tools annotated `destructiveHint: true`, for servers whose tools are all
 *   annotated with care;
 * - "always" / "never".
 * With "unless-read-only" and "destructive", a tool whose hints contradict each other
 * (`readOnlyHint: true` with `destructiveHint: true`) pauses, and is not read-only.
 */
export type McpApprovalDefault = "destructive" | "unless-read-only" | "always" | "never";

/** What the MCP server said about one tool, kept beside the connector's method. */
export interface McpToolInfo {
  /** The tool's name on the server (the method name may differ: `add-note` → `add_note`). */
  name: string;
  title?: string;
  /**
   * `readOnlyHint`: the tool does not change its environment; the method gets `readOnly: true`
   * (no write-ahead entry for its calls).
   */
  readOnly: boolean;
  /** `destructiveHint` as the server sent it (undefined when it did not). */
  destructive: boolean | undefined;
  /** `idempotentHint` as sent: calling again with the same arguments has no further effect. */
  idempotent: boolean | undefined;
  /** `openWorldHint` as sent: the tool reaches outside systems. */
  openWorld: boolean | undefined;
  /** The server's tool description as listed, annotations included. */
  tool: Tool;
}

/** The `_meta` key that carries a call's idempotency key (R-CON-1) to the MCP server. */
export const IDEMPOTENCY_KEY_META = "codemode/idempotencyKey";

/** What the server's annotations say about one tool. Hints are hints: the `tool` option decides. */
export function mcpToolInfo(tool: Tool): McpToolInfo {
  const hints = tool.annotations ?? {};
  const title = tool.title ?? hints.title;
  return {
    name: tool.name,
    ...(title ? { title } : {}),
    // Contradictory hints are read the cautious way: such a tool may change things.
    readOnly: hints.readOnlyHint === true && hints.destructiveHint !== true,
    destructive: hints.destructiveHint,
    idempotent: hints.idempotentHint,
    openWorld: hints.openWorldHint,
    tool,
  };
}

/** Whether a tool pauses for approval by default, from its annotations. */
export function approvalByDefault(info: McpToolInfo, rule: McpApprovalDefault): boolean {
  switch (rule) {
    case "always":
      return true;
    case "never":
      return false;
    case "unless-read-only":
      return info.destructive === true || (!info.readOnly && info.destructive !== false);
    case "destructive":
      return info.destructive === true;
  }
}

/**
 * One MCP tool as a connector method: its input and output JSON Schemas (so `describe` shows real
 * types and arguments are checked before a call can pause), its description, approval from the
 * annotations, and an `execute` that calls the tool and unwraps the result. The call carries the
 * idempotency key in `_meta["codemode/idempotencyKey"]`, the same on every attempt, for servers
 * that dedupe. A tool the server runs as a task is called as one and polled to its end, so the
 * per-request timeout does not cut a long job: on 2025-11-25, when its `execution.taskSupport` is
 * "optional" or "required" and the server has the tasks capability; on 2026-07-28 (SDK 2), when
 * the server offers the tasks extension and answers the call with a task.
 */
export function mcpToolDefinition(
  client: McpClient,
  info: McpToolInfo,
  label: string,
  options: { approval: McpApprovalDefault; timeoutMs?: number; taskTimeoutMs: number },
): ToolDefinition {
  const { tool } = info;
  const requestOptions = options.timeoutMs === undefined ? undefined : { timeout: options.timeoutMs };
  const definition: ToolDefinition = {
    inputSchema: tool.inputSchema as JsonSchema,
    execute: async (args, context) => {
      const params = {
        name: tool.name,
        arguments: args ?? {},
        _meta: { [IDEMPOTENCY_KEY_META]: context.idempotencyKey },
      };
      const wait = {
        ...options,
        ...(context.deadline === undefined ? {} : { deadline: context.deadline }),
        ...(context.signal ? { signal: context.signal } : {}),
      };
      // Decided per call: the server's capabilities are known once connected, whatever the order.
      if (isSdk2Client(client)) return callToolWithSdk2(client, tool, params, label, wait);
      if (runsAsTask(client, tool)) return callToolAsTask(client, params, label, wait);
      return unwrapToolResult(await client.callTool(params, undefined, requestOptions), label);
    },
  };
  const description = [info.title && info.title !== tool.description ? info.title : undefined, tool.description]
    .filter(Boolean)
    .join(": ");
  if (description) definition.description = description;
  if (tool.outputSchema) definition.outputSchema = tool.outputSchema as JsonSchema;
  if (approvalByDefault(info, options.approval)) definition.requiresApproval = true;
  if (info.readOnly) definition.readOnly = true;
  return definition;
}
