import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { McpClient } from "./mcp-tool-definition.js";
import { isSdk2Client } from "./sdk2-client.js";

const METHOD = "notifications/tools/list_changed";

type StoredHandler = (...args: unknown[]) => unknown;

/**
 * Refreshes on `notifications/tools/list_changed`. A handler already set on the client for it
 * (the SDK's own `listChanged` option, or the application's) keeps being called: both SDKs keep
 * one handler per method, so the earlier one is chained rather than replaced, with the very
 * arguments the SDK hands to handlers (SDK 2 passes more than the notification).
 */
export function watchToolList(client: McpClient, refresh: () => Promise<void>, onError: (error: Error) => void): void {
  const handlers: unknown = (client as { _notificationHandlers?: unknown })._notificationHandlers;
  const stored = handlers instanceof Map ? (handlers as Map<string, StoredHandler>) : undefined;
  const earlier = stored?.get(METHOD);
  const onChange = () => {
    refresh().catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))));
  };
  // SDK 2 names the method; SDK 1 takes the notification's schema.
  if (isSdk2Client(client)) client.setNotificationHandler(METHOD, onChange);
  else client.setNotificationHandler(ToolListChangedNotificationSchema, onChange);
  const ours = stored?.get(METHOD);
  if (!stored || !earlier || !ours || ours === earlier) return;
  stored.set(METHOD, async (...args: unknown[]) => {
    await ours(...args);
    await earlier(...args);
  });
}
