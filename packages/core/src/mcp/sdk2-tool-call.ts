import { type McpClientSdk2, requestOptions } from "./sdk2-client.js";
import { callLegacyTaskWithSdk2, runsAsLegacyTask } from "./sdk2-legacy-task.js";
import type { UpstreamTaskOptions } from "./task-deadline.js";
import { unwrapToolResult } from "./unwrap-tool-result.js";
import { callToolWithExtensionTasks, offersExtensionTasks } from "./upstream-extension-task.js";

type CallParams = { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> };

/**
 * One tool call through an SDK 2 client, as the tasks the server offers allow: on a 2026-07-28
 * connection whose server offers the tasks extension, a call the server may answer with a task
 * (SEP-2663); on a 2025-11-25 connection, a 2025-11-25 task for a tool whose `taskSupport` asks for
 * one (SEP-1686); otherwise a plain `tools/call` bounded by the per-request timeout. The tool's
 * listed definition goes with the call, so SDK 2 checks structured output against it and mirrors
 * the headers it declares, as it does after its own `listTools()`.
 *
 * @example
 * const result = await callToolWithSdk2(client, tool, { name: "build", arguments: {}, _meta: {} }, "ci.build", { taskTimeoutMs: 600_000 });
 */
export async function callToolWithSdk2(
  client: McpClientSdk2,
  tool: { name: string; execution?: { taskSupport?: string } },
  params: CallParams,
  label: string,
  options: UpstreamTaskOptions,
): Promise<unknown> {
  if (offersExtensionTasks(client)) return callToolWithExtensionTasks(client, tool, params, label, options);
  if (runsAsLegacyTask(client, tool)) return callLegacyTaskWithSdk2(client, params, label, options);
  const answer = await client.callTool(params, { ...requestOptions(options.timeoutMs), toolDefinition: tool });
  return unwrapToolResult(answer, label);
}
