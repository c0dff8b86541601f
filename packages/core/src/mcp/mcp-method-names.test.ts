import { describe, expect, it } from "vitest";
import { McpConnectorError, mcpMethodNames } from "./mcp-method-names.js";

describe("mcpMethodNames (R-CON-5)", () => {
  it("turns MCP tool names into identifiers", () => {
    expect([...mcpMethodNames("files", ["read-file", "fs.write", "2fa", "list_dir", "__proto__"])]).toEqual([
      ["read-file", "read_file"],
      ["fs.write", "fs_write"],
      ["2fa", "_2fa"],
      ["list_dir", "list_dir"],
      ["__proto__", "__proto___"],
    ]);
  });

  it("refuses names that collide, naming every pair, instead of numbering them", () => {
    let error: unknown;
    try {
      mcpMethodNames("files", ["read-file", "read_file", "read.file", "write"]);
    } catch (caught) {
      error = caught;
    }
    expect(McpConnectorError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('MCP tools "read-file" and "read_file" would both be files.read_file');
    expect((error as Error).message).toContain('"read-file" and "read.file"');
  });
});
