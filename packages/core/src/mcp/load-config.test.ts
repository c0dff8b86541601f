import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCodemodeConfig } from "./load-config.js";

const folder = mkdtempSync(join(tmpdir(), "codemode-config-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// Shaped like a runtime: the loader checks the methods a server needs, not where it came from.
const FAKE_RUNTIME = `{ ${["execute", "approve", "reject", "pending", "search", "describe", "modelDescription", "close"].map((name) => `${name}() {}`).join(", ")}, label: "fake" }`;

function config(name: string, source: string): string {
  writeFileSync(join(folder, name), source);
  return name;
}

describe("loadCodemodeConfig", () => {
  it("takes a runtime as the default export, with mcpServerOptions beside it", async () => {
    const loaded = await loadCodemodeConfig(
      config("object.mjs", `export default ${FAKE_RUNTIME};\nexport const mcpServerOptions = { operatorTools: true };`),
      folder,
    );
    expect(loaded.runtime).toMatchObject({ label: "fake" });
    expect(loaded.serverOptions).toEqual({ operatorTools: true });
  });

  it("calls a factory (async too), or takes an export named runtime", async () => {
    expect(
      (await loadCodemodeConfig(config("factory.mjs", `export default async () => (${FAKE_RUNTIME});`), folder))
        .runtime,
    ).toMatchObject({ label: "fake" });
    expect(
      (await loadCodemodeConfig(config("named.mjs", `export const runtime = ${FAKE_RUNTIME};`), folder)).serverOptions,
    ).toEqual({});
  });

  it("refuses a module that gives no runtime, naming the file", async () => {
    await expect(loadCodemodeConfig(config("wrong.mjs", "export default 42;"), folder)).rejects.toThrow(
      /wrong\.mjs must export \(as default, or as "runtime"\) a Code Mode runtime/,
    );
  });
});
