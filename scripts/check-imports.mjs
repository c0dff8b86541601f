// The import check: dependency-cruiser with the rules of .dependency-cruiser.cjs (no cycles, the
// allowed directions between packages and between core's rooms, the runtime's rooms entered by
// their front doors), and no file loose at the runtime's top level. Exits non-zero on a violation.
//
//   node scripts/check-imports.mjs      # `npm run lint:imports`, part of `npm run lint`
//
// dependency-cruiser reads TypeScript through the compiler's JS API, which the repo's `typescript`
// (the Go port, 7.x) does not have: its imports of `typescript` are resolved to the 5.9 compiler
// kept as `typescript59`, the one scripts/check-sizes.mjs uses too.
import { readdirSync } from "node:fs";
import { registerHooks } from "node:module";

// Every runtime file lives in one of the runtime's rooms (a folder with its front door, index.ts):
// a file at runtime/'s top level would say nothing of where it belongs.
const runtimeTop = new URL("../packages/core/src/runtime/", import.meta.url);
const loose = readdirSync(runtimeTop, { withFileTypes: true }).filter((entry) => entry.isFile());
if (loose.length > 0) {
  console.error(
    `packages/core/src/runtime/ holds files outside its rooms: ${loose.map((entry) => entry.name).join(", ")}`,
  );
  process.exit(1);
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromCruiser = context.parentURL?.includes("/node_modules/dependency-cruiser/") ?? false;
    if (fromCruiser && (specifier === "typescript" || specifier.startsWith("typescript/"))) {
      return nextResolve(specifier.replace(/^typescript/, "typescript59"), context);
    }
    return nextResolve(specifier, context);
  },
});

process.argv = [
  process.argv[0],
  "depcruise",
  "packages",
  "--config",
  ".dependency-cruiser.cjs",
  "--output-type",
  "err",
  ...process.argv.slice(2),
];
await import(new URL("../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs", import.meta.url).href);
