import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript59";
import { describe, expect, it } from "vitest";

/** Every name an entry point exports, types included, read from its source. */
function exportedNames(entry: string): string[] {
  const path = fileURLToPath(new URL(entry, import.meta.url));
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.push(element.name.text);
    } else if (ts.isExportDeclaration(statement)) {
      names.push(`* from ${(statement.moduleSpecifier as ts.StringLiteral).text}`);
    }
  }
  return names;
}

describe("the public surface of @codemode/core", () => {
  it("the root entry keeps what applications use: at most 52 names, no adapter glue, no executor protocol, no star re-exports", () => {
    const names = exportedNames("./index.ts");
    // The runtime's methods bring their input and report types (replayCheck, fork and rerun took
    // it from 41 to 48; decide and approvalPolicy to 51); a name beyond 52 should be asked
    // whether it belongs at a subpath.
    expect(names.length).toBeLessThanOrEqual(52);
    expect(names.filter((name) => name.startsWith("*"))).toEqual([]);
    for (const glue of [
      "modelFacingOutcome",
      "pauseApprovalReason",
      "readPauseReference",
      "createOutcomeMemo",
      "planCall",
      "createIsolatedVmExecutor",
      "SandboxRequest",
      "HostReply",
      "valueCodec",
      "KeyvLike",
    ]) {
      expect(names).not.toContain(glue);
    }
    expect(names).toEqual(
      expect.arrayContaining([
        "createCodemodeRuntime",
        "defineConnector",
        "CodemodeError",
        "Outcome",
        "ExecutionSummary",
        "Page",
        "ListQuery",
      ]),
    );
  });

  it("adapter glue, the executor and store-author names live at their subpaths", () => {
    expect(exportedNames("./adapters/index.ts")).toEqual(
      expect.arrayContaining(["modelFacingOutcome", "pauseApprovalReason", "decidePendingAction", "createOutcomeMemo"]),
    );
    expect(exportedNames("./sandbox/index.ts")).toEqual(
      expect.arrayContaining(["createIsolatedVmExecutor", "SandboxRequest", "HostReply", "valueCodec"]),
    );
    expect(exportedNames("./log/index.ts")).toEqual(
      expect.arrayContaining([
        "KeyvLike",
        "LockProvider",
        "createInProcessLock",
        "ExecutionIndex",
        "createKeyvExecutionIndex",
      ]),
    );
  });
});
