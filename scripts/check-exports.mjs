// The exports check: each entry point of @codemode/core says only what its users need. The root is
// for applications (at most 40 names), `/adapters` for adapter authors (at most 50); none
// re-exports with `*`, which would let a name slip in unseen.
//
//   node scripts/check-exports.mjs     # `npm run lint:exports`, part of `npm run lint`
//
// Names are read from the entry's source with the TypeScript 5.9 compiler API (`typescript59`),
// as scripts/check-sizes.mjs does.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript59";

const BOUNDS = [
  { entry: "packages/core/src/index.ts", name: "@codemode/core", most: 40 },
  { entry: "packages/core/src/adapters/index.ts", name: "@codemode/core/adapters", most: 50 },
];

/** Every name an entry point exports, types included; `* from …` for a star re-export. */
export function exportedNames(path) {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest);
  const names = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.push(element.name.text);
    } else if (ts.isExportDeclaration(statement)) {
      names.push(`* from ${statement.moduleSpecifier.text}`);
    }
  }
  return names;
}

const root = new URL("..", import.meta.url);
let failed = false;
for (const { entry, name, most } of BOUNDS) {
  const names = exportedNames(fileURLToPath(new URL(entry, root)));
  const stars = names.filter((exported) => exported.startsWith("* from"));
  if (names.length > most || stars.length > 0) {
    failed = true;
    console.error(
      `${name} exports ${names.length} names (at most ${most})${stars.length > 0 ? ` and re-exports ${stars.join(", ")}` : ""}: move what only some users need to a subpath`,
    );
  } else console.log(`${name}: ${names.length} names (at most ${most})`);
}
if (failed) process.exit(1);
