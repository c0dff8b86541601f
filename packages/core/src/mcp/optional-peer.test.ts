import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("the MCP SDKs (1.x and 2.x packages) stay optional peers", () => {
  it("no module of @codemode/core outside mcp/ imports it", () => {
    const source = fileURLToPath(new URL("..", import.meta.url));
    const importing: string[] = [];
    const walk = (directory: string) => {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        const path = join(directory, entry.name);
        if (entry.isDirectory()) {
          if (relative(source, path) !== "mcp") walk(path);
        } else if (entry.name.endsWith(".ts") && readFileSync(path, "utf8").includes("@modelcontextprotocol/"))
          importing.push(relative(source, path));
      }
    };
    walk(source);
    expect(importing).toEqual([]);
  });
});
