// @codemode/core/mcp: MCP in and out (R-CON-5). Needs `@modelcontextprotocol/sdk` (an optional
// peer dependency); nothing else in @codemode/core imports it.
export { MAX_SERVER_INSTRUCTIONS_CHARS, mcpConnector, type McpConnector, type McpConnectorOptions } from "./mcp-connector.js";
export { IDEMPOTENCY_KEY_META, type McpApprovalDefault, type McpClient, type McpToolInfo } from "./mcp-tool-definition.js";
export { McpConnectorError } from "./mcp-method-names.js";
export { unwrapToolResult } from "./unwrap-tool-result.js";
export { createCodemodeMcpServer, type CodemodeMcpServer, type CodemodeMcpServerOptions } from "./create-codemode-mcp-server.js";
export type { HttpListenOptions, McpHttpListener } from "./http-listener.js";
export { loadCodemodeConfig, type LoadedCodemodeConfig } from "./load-config.js";
