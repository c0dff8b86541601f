// The import check (`npm run lint:imports`, part of `npm run lint`): no cycles, and every import
// points the allowed way, between packages and between core's rooms. docs/architecture.md draws
// the same arrows.
//
// Between packages: @codemode/core imports none of ours; every other package imports core
// only (tests may also use @codemode/storage and each package's own testing helpers).
// Inside core, from the bottom up: `sandbox/` (the isolate and its value codec) knows nothing of
// the rest; `log/` (the durable store) may use the sandbox's value codec and limits, since it
// keeps what the sandbox encodes; `connectors/` know neither; the runtime uses all three;
// `adapters/` and `mcp/` sit on top of the runtime, and nothing below imports them; `openapi/`
// makes connectors and knows only `connectors/`. The runtime's rooms, bottom up: approvals and
// catalogue, context, records, passes, operations, handle; each is entered by its index.ts.
const OTHER_PACKAGES = "^packages/(storage|ai-sdk|langchain|bullmq|cli)/";
const TEST = "\\.test\\.ts$|\\.test-d\\.ts$|/testing/|-fixtures\\.ts$";

/** Imports from core's `room` that must not reach any of `forbidden`. */
function coreRoom(name, room, forbidden) {
  return {
    name,
    severity: "error",
    comment: `packages/core/src/${room}/ must not import ${forbidden.join(", ")}`,
    from: { path: `^packages/core/src/${room}/`, pathNot: TEST },
    to: { path: `^packages/core/src/(${forbidden.join("|")})/` },
  };
}

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A cycle means a type or helper lives in the wrong file: move it where both sides can import it.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-imports-no-other-package",
      severity: "error",
      comment: "@codemode/core is the base: it imports none of the other packages.",
      from: { path: "^packages/core/" },
      to: { path: `${OTHER_PACKAGES}|^node_modules/@codemode/(storage|ai-sdk|langchain|bullmq|cli)/` },
    },
    {
      name: "packages-import-core-only",
      severity: "error",
      comment: "A package's sources import core, never a sibling package (tests may use @codemode/storage).",
      from: { path: `${OTHER_PACKAGES}src/`, pathNot: TEST },
      to: {
        path: `${OTHER_PACKAGES}|^node_modules/@codemode/(storage|ai-sdk|langchain|bullmq|cli)/`,
        pathNot: "^packages/$1/",
      },
    },
    {
      name: "packages-use-core-entry-points",
      severity: "error",
      comment: "Other packages reach core through its published entry points, never its source files.",
      from: { path: OTHER_PACKAGES },
      to: { path: "^packages/core/src/" },
    },
    coreRoom("sandbox-is-the-bottom", "sandbox", ["runtime", "log", "connectors", "adapters", "mcp", "telemetry"]),
    coreRoom("log-is-below-the-runtime", "log", ["runtime", "adapters", "mcp", "telemetry", "connectors"]),
    coreRoom("connectors-are-below-the-runtime", "connectors", ["runtime", "log", "adapters", "mcp", "telemetry"]),
    {
      ...coreRoom("runtime-is-below-its-surfaces", "runtime", ["adapters", "mcp"]),
      // The handle's modelDescription() hands out the adapters' model-facing text: the one arrow up.
      to: { path: "^packages/core/src/(adapters|mcp)/", pathNot: "^packages/core/src/adapters/model-description\\.ts$" },
    },
    coreRoom("adapters-are-not-mcp", "adapters", ["mcp"]),
    coreRoom("openapi-is-a-connector", "openapi", ["runtime", "log", "sandbox", "adapters", "mcp", "telemetry"]),
    // The runtime's rooms (approvals, catalogue, context, records, passes, operations, handle) each
    // have one front door, their index.ts: nothing outside a room imports its other files.
    {
      name: "runtime-rooms-from-outside",
      severity: "error",
      comment: "Outside the runtime, import a runtime room through its front door (runtime/<room>/index.ts).",
      from: { path: "^packages/core/src/", pathNot: `^packages/core/src/runtime/|${TEST}` },
      to: { path: "^packages/core/src/runtime/[^/]+/", pathNot: "^packages/core/src/runtime/[^/]+/index\\.ts$" },
    },
    {
      name: "runtime-rooms-from-each-other",
      severity: "error",
      comment: "From another room, import a runtime room through its front door (runtime/<room>/index.ts).",
      from: { path: "^packages/core/src/runtime/([^/]+)/", pathNot: TEST },
      to: {
        path: "^packages/core/src/runtime/[^/]+/",
        pathNot: ["^packages/core/src/runtime/$1/", "^packages/core/src/runtime/[^/]+/index\\.ts$"],
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules|/dist/" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
