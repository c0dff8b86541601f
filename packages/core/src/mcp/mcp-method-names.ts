import { methodNamesFor } from "../connectors/method-names.js";
import { isErrorNamed } from "../error-message.js";

/**
 * Raised when an MCP server's tools cannot become one connector: two tool names that sanitise to
 * the same method name, or a tool whose schema or policy the runtime would refuse.
 */
export class McpConnectorError extends Error {
  override readonly name = "McpConnectorError";

  /** True for an `McpConnectorError` from any copy of this package. */
  static isInstance(error: unknown): error is McpConnectorError {
    return isErrorNamed(error, "McpConnectorError");
  }
}

/**
 * Method names for MCP tool names (R-CON-5): a character an identifier cannot hold becomes `_`
 * (`add-note` → `add_note`), a leading digit gets a `_` before it. Unlike `methodNamesFor`, two
 * tools that land on one name are refused rather than numbered: `notes.add_note_2` would name a
 * different tool depending on the order the server lists them in, and a program that calls it
 * must mean the same tool on every pass.
 *
 * @example
 * mcpMethodNames("notes", ["add-note", "list_notes"]); // Map { "add-note" => "add_note", "list_notes" => "list_notes" }
 * mcpMethodNames("notes", ["add-note", "add_note"]);   // throws McpConnectorError naming both tools
 */
export function mcpMethodNames(connectorName: string, toolNames: readonly string[]): Map<string, string> {
  const toolByMethod = new Map<string, string>();
  const methods = new Map<string, string>();
  const collisions: string[] = [];
  for (const toolName of toolNames) {
    // One name at a time: the shared rule without its numbering of collisions.
    const method = methodNamesFor([toolName]).get(toolName)!;
    const earlier = toolByMethod.get(method);
    if (earlier !== undefined) {
      collisions.push(`MCP tools "${earlier}" and "${toolName}" would both be ${connectorName}.${method}`);
      continue;
    }
    toolByMethod.set(method, toolName);
    methods.set(toolName, method);
  }
  if (collisions.length > 0) {
    throw new McpConnectorError(
      `mcpConnector("${connectorName}"): ${collisions.join("; ")}. Leave one out with the tool option (return null for it), or rename it on the server.`,
    );
  }
  return methods;
}
