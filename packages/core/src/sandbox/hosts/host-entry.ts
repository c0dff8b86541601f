import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The module a sandbox thread or process runs (`sandbox-thread.js`, `hosts/sandbox-process.js`,
 * relative to the sandbox folder). Built, it sits beside the host's module. Run from the sources
 * (the test suite), the host still runs the built one: plain Node cannot resolve the sources'
 * `.js` imports.
 */
export function hostEntry(fromSandboxFolder: string): URL {
  const sandboxFolder = new URL("../", import.meta.url);
  const beside = new URL(fromSandboxFolder, sandboxFolder);
  if (!import.meta.url.endsWith(".ts")) return beside;
  const built = new URL(`../../../dist/sandbox/${fromSandboxFolder}`, import.meta.url);
  if (!existsSync(fileURLToPath(built)))
    throw new Error(
      `the sandbox host runs the built package: run \`npm run build\` first (${fileURLToPath(built)} is missing)`,
    );
  return built;
}
