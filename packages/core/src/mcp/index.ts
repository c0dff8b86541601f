// @codemode/core/mcp: MCP in and out (R-CON-5). Needs `@modelcontextprotocol/sdk` (1.x, the
// 2025-11-25 protocol) and `@modelcontextprotocol/server`, `/client` and `/node` (2.x, the
// 2026-07-28 protocol), optional peer dependencies; nothing else in @codemode/core imports them.

export {
  type CodemodeMcpServer,
  type CodemodeMcpServerOptions,
  createCodemodeMcpServer,
} from "./create-codemode-mcp-server.js";
export type { HttpListenOptions, McpHttpListener } from "./http-listener.js";
export { type EventKeyv, KeyvEventStore, type KeyvEventStoreOptions } from "./kv-event-store.js";
export { type LoadedCodemodeConfig, loadCodemodeConfig } from "./load-config.js";
export {
  MAX_SERVER_INSTRUCTIONS_CHARS,
  type McpConnector,
  type McpConnectorOptions,
  mcpConnector,
} from "./mcp-connector.js";
export { McpConnectorError } from "./mcp-method-names.js";
export {
  IDEMPOTENCY_KEY_META,
  type McpApprovalDefault,
  type McpClient,
  type McpToolInfo,
} from "./mcp-tool-definition.js";
export { unwrapToolResult } from "./unwrap-tool-result.js";
