// Size check: every TypeScript file in packages/*/src (sources, tests and conformance suites alike)
// and every TypeScript file under test/ (test files, fixtures and child-process stories), with no
// exemption, stays within 400 lines and every function within 150 (a `describe(...)` callback is a
// function), so no file grows into a thousand-line mix of concerns. A long list of cases is split
// by concern, as a long module is.
//
//   node scripts/check-sizes.mjs     # prints `path:line name (N lines)` per breach, exits 1 if any
//
// Functions are parsed with the TypeScript 5.9 compiler API (the `typescript59` alias): the repo's
// `typescript` is the Go port, which has no JS API.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript59";

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 150;

const root = fileURLToPath(new URL("..", import.meta.url));

/** Every `.ts` file below `directory`, as paths relative to the repo root. */
function typeScriptFiles(directory) {
  const files = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...typeScriptFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".ts")) files.push(relative(root, path));
  }
  return files;
}

/** Every `.ts` file below `directory`, or none when it does not exist. */
function typeScriptFilesIfAny(directory) {
  try {
    return typeScriptFiles(directory);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
    return [];
  }
}

// The checked files: packages/*/src and test/, each searched recursively.
function checkedFiles() {
  const packagesDirectory = join(root, "packages");
  const files = [];
  for (const entry of readdirSync(packagesDirectory, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    files.push(...typeScriptFilesIfAny(join(packagesDirectory, entry.name, "src")));
  }
  files.push(...typeScriptFilesIfAny(join(root, "test")));
  return files.sort();
}

/** The text of a property or declaration name, or undefined when it is computed. */
function nameText(name, sourceFile) {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) {
    return name.text;
  }
  return name.getText(sourceFile);
}

/** A readable name: its own, or the variable, property or class member it is assigned to. */
function functionName(node, sourceFile) {
  if (ts.isConstructorDeclaration(node)) {
    const className = node.parent && ts.isClassLike(node.parent) ? nameText(node.parent.name, sourceFile) : undefined;
    return className ? `${className}.constructor` : "constructor";
  }
  const prefix = ts.isGetAccessorDeclaration(node) ? "get " : ts.isSetAccessorDeclaration(node) ? "set " : "";
  const ownName = nameText(node.name, sourceFile);
  if (ownName) {
    const owner = node.parent && ts.isClassLike(node.parent) ? nameText(node.parent.name, sourceFile) : undefined;
    return prefix + (owner ? `${owner}.${ownName}` : ownName);
  }
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  ) {
    const assignedName = nameText(parent.name, sourceFile);
    if (assignedName) return assignedName;
  }
  if (parent && ts.isExportAssignment(parent)) return "default export";
  return ts.isArrowFunction(node) ? "(arrow function)" : "(anonymous function)";
}

function isMeasuredFunction(node) {
  // Bodiless declarations (overload signatures, abstract methods) have no lines of code.
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)) &&
    node.body !== undefined
  );
}

/** Functions over the limit, with nested closures counted in their enclosing function's length. */
function oversizedFunctions(path, text) {
  const sourceFile = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const breaches = [];
  const visit = (node) => {
    if (isMeasuredFunction(node)) {
      const firstLine = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
      const lastLine = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const lines = lastLine - firstLine + 1;
      if (lines > MAX_FUNCTION_LINES) {
        breaches.push({ line: firstLine, name: functionName(node, sourceFile), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return breaches;
}

function lineCount(text) {
  if (text.length === 0) return 0;
  const lines = text.split("\n").length;
  return text.endsWith("\n") ? lines - 1 : lines;
}

const report = [];
for (const path of checkedFiles()) {
  const text = readFileSync(join(root, path), "utf8");
  const displayPath = path.split(sep).join("/");
  const lines = lineCount(text);
  if (lines > MAX_FILE_LINES) report.push(`${displayPath}:1 file (${lines} lines)`);
  for (const breach of oversizedFunctions(path, text)) {
    report.push(`${displayPath}:${breach.line} ${breach.name} (${breach.lines} lines)`);
  }
}

if (report.length > 0) {
  console.log(report.join("\n"));
  console.error(
    `\n${report.length} over the limits (files ≤ ${MAX_FILE_LINES} lines, functions ≤ ${MAX_FUNCTION_LINES} lines).`,
  );
  process.exit(1);
}
console.log(`Sizes OK: files ≤ ${MAX_FILE_LINES} lines, functions ≤ ${MAX_FUNCTION_LINES} lines.`);
