// What the schema-to-typescript tests share, never exported by the package: an in-memory compiler
// that type-checks the generated declarations against a program that uses them, strict, es2022.
// TypeScript 7 has no JavaScript compiler API; 5.9 (an npm alias) type-checks the generated text.
import ts from "typescript59";
import { expect } from "vitest";
import type { JsonSchema } from "./define-connector.js";
import { jsonSchemaToType, type SchemaToTypeOptions } from "./schema-to-typescript.js";

const compilerOptions: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts"],
  types: [],
};
const DECLARATIONS_FILE = "/virtual/declarations.ts";
const PROGRAM_FILE = "/virtual/program.ts";
const libraryFiles = new Map<string, ts.SourceFile>();

function createProgram(declarations: string, program: string): ts.Program {
  const files = new Map([
    [DECLARATIONS_FILE, declarations],
    [PROGRAM_FILE, program],
  ]);
  const host = ts.createCompilerHost(compilerOptions, true);
  host.getCurrentDirectory = () => "/virtual";
  host.fileExists = (fileName) => files.has(fileName) || ts.sys.fileExists(fileName);
  host.readFile = (fileName) => files.get(fileName) ?? ts.sys.readFile(fileName);
  host.writeFile = () => {};
  host.getSourceFile = (fileName, languageVersion) => {
    const text = files.get(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true);
    // Parsing the standard library once keeps each check fast.
    let library = libraryFiles.get(fileName);
    if (library === undefined) {
      const libraryText = ts.sys.readFile(fileName);
      if (libraryText === undefined) return undefined;
      library = ts.createSourceFile(fileName, libraryText, languageVersion, true);
      libraryFiles.set(fileName, library);
    }
    return library;
  };
  return ts.createProgram({ rootNames: [DECLARATIONS_FILE, PROGRAM_FILE], options: compilerOptions, host });
}

interface Problem {
  file: "declarations" | "program";
  line: number;
  message: string;
}

function typeCheck(declarations: string, program: string): Problem[] {
  return ts.getPreEmitDiagnostics(createProgram(declarations, program)).map((diagnostic) => {
    const file = diagnostic.file;
    const line =
      file !== undefined && diagnostic.start !== undefined
        ? file.getLineAndCharacterOfPosition(diagnostic.start).line + 1
        : 0;
    return {
      file: file?.fileName === DECLARATIONS_FILE ? "declarations" : "program",
      line,
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"),
    };
  });
}

/** The declarations compile, and so does every line of the program. */
export function expectCompiles(declarations: string, program: string): void {
  expect(typeCheck(declarations, program), declarations).toEqual([]);
}

/**
 * The declarations compile, and the program fails exactly on the lines marked `// error`: every
 * marked line has at least one diagnostic, no other line has any.
 */
export function expectErrorsOnMarkedLines(declarations: string, program: string): void {
  const problems = typeCheck(declarations, program);
  expect(
    problems.filter((problem) => problem.file === "declarations"),
    declarations,
  ).toEqual([]);
  const marked = program.split("\n").flatMap((line, index) => (line.includes("// error") ? [index + 1] : []));
  expect(marked.length, "the program marks at least one line").toBeGreaterThan(0);
  const failing = [...new Set(problems.map((problem) => problem.line))].sort((left, right) => left - right);
  expect(
    failing,
    `${declarations}\n---\n${program}\n---\n${problems.map((problem) => `${problem.line}: ${problem.message}`).join("\n")}`,
  ).toEqual(marked);
}

/** What an editor shows for the property at the end of `expression` (its doc comment and tags). */
export function documentationOf(declarations: string, expression: string): string {
  const program = createProgram(declarations, `${expression};\n`);
  const source = program.getSourceFile(PROGRAM_FILE)!;
  const statement = source.statements[0];
  if (
    statement === undefined ||
    !ts.isExpressionStatement(statement) ||
    !ts.isPropertyAccessExpression(statement.expression)
  ) {
    throw new Error(`not a property access: ${expression}`);
  }
  const checker = program.getTypeChecker();
  const symbol = checker.getSymbolAtLocation(statement.expression.name);
  if (symbol === undefined) throw new Error(`no symbol for ${expression}`);
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker));
  const tags = symbol
    .getJsDocTags(checker)
    .map((tag) => `@${tag.name}${tag.text === undefined ? "" : ` ${ts.displayPartsToString(tag.text)}`}`);
  return [text, ...tags].filter((part) => part !== "").join("\n");
}

/** Declares `value` of the schema's type, with its named types in `declare namespace types`. */
export function declareValue(schema: JsonSchema | boolean, options: SchemaToTypeOptions = {}): string {
  const namedTypes = options.namedTypes ?? new Map<string, string>();
  const type = jsonSchemaToType(schema, { typeNamespace: "types", ...options, namedTypes });
  const aliases = [...namedTypes].map(([name, body]) => `  type ${name} = ${body.replaceAll("\n", "\n  ")};`);
  return `declare namespace types {\n${aliases.join("\n")}\n}\ndeclare const value: ${type};\ntype Value = ${type};\n`;
}
