// TypeScript 7 has no JavaScript compiler API; 5.9 (an npm alias) type-checks the generated text.
import ts from "typescript59";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineConnector, type JsonSchema, type StandardSchemaV1, type ToolDefinition } from "./define-connector.js";
import {
  CODEMODE_DECLARATION,
  connectorDeclaration,
  jsonSchemaToType,
  runtimeDeclarations,
  type SchemaToTypeOptions,
  toolDeclaration,
} from "./schema-to-typescript.js";

// ---------------------------------------------------------------------------------------------
// An in-memory compiler: the generated declarations and a program that uses them, strict, es2022.

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
function expectCompiles(declarations: string, program: string): void {
  expect(typeCheck(declarations, program), declarations).toEqual([]);
}

/**
 * The declarations compile, and the program fails exactly on the lines marked `// error`: every
 * marked line has at least one diagnostic, no other line has any.
 */
function expectErrorsOnMarkedLines(declarations: string, program: string): void {
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
function documentationOf(declarations: string, expression: string): string {
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
function declareValue(schema: JsonSchema | boolean, options: SchemaToTypeOptions = {}): string {
  const namedTypes = options.namedTypes ?? new Map<string, string>();
  const type = jsonSchemaToType(schema, { typeNamespace: "types", ...options, namedTypes });
  const aliases = [...namedTypes].map(([name, body]) => `  type ${name} = ${body.replaceAll("\n", "\n  ")};`);
  return `declare namespace types {\n${aliases.join("\n")}\n}\ndeclare const value: ${type};\ntype Value = ${type};\n`;
}

function tool(definition: Omit<ToolDefinition, "execute">): ToolDefinition {
  return { ...definition, execute: () => undefined };
}

/** One method's declaration inside its connector's global, as the model would see it. */
function declareMethod(connectorName: string, methodName: string, definition: ToolDefinition): string {
  return connectorDeclaration(defineConnector({ name: connectorName, tools: { [methodName]: definition } }));
}

const createIssue = tool({
  description: "Create an issue.",
  inputSchema: {
    type: "object",
    properties: {
      repo: { type: "string", description: "owner/name" },
      title: { type: "string" },
      labels: { type: "array", items: { type: "string", enum: ["bug", "feature"] } },
    },
    required: ["repo", "title"],
  },
  outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
});

// ---------------------------------------------------------------------------------------------

describe("jsonSchemaToType: primitive types", () => {
  it("writes each JSON type as its TypeScript type, integer as number", () => {
    expect(jsonSchemaToType({ type: "string" })).toBe("string");
    expect(jsonSchemaToType({ type: "number" })).toBe("number");
    expect(jsonSchemaToType({ type: "integer" })).toBe("number");
    expect(jsonSchemaToType({ type: "boolean" })).toBe("boolean");
    expect(jsonSchemaToType({ type: "null" })).toBe("null");
  });

  it("writes a list of types as a union that accepts each and nothing else", () => {
    const declarations = declareValue({ type: ["string", "integer", "null"] });
    expect(jsonSchemaToType({ type: ["string", "integer", "null"] })).toBe("string | number | null");
    expectErrorsOnMarkedLines(
      declarations,
      [
        'const text: Value = "a";',
        "const count: Value = 1;",
        "const nothing: Value = null;",
        "const flag: Value = true; // error",
      ].join("\n"),
    );
  });

  it("writes unknown for the true schema, an empty schema and a type it does not know; never for false", () => {
    expect(jsonSchemaToType(true)).toBe("unknown");
    expect(jsonSchemaToType({})).toBe("unknown");
    expect(jsonSchemaToType({ type: "date" })).toBe("unknown");
    expect(jsonSchemaToType({ type: "toString" })).toBe("unknown");
    expect(jsonSchemaToType({ description: "anything" })).toBe("unknown");
    expect(jsonSchemaToType(false)).toBe("never");
  });
});

describe("jsonSchemaToType: objects", () => {
  const person: JsonSchema = {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer" } },
    required: ["name"],
  };

  it("marks properties not in required as optional", () => {
    expect(jsonSchemaToType(person)).toBe("{ name: string; age?: number }");
    expectErrorsOnMarkedLines(
      declareValue(person),
      [
        'const full: Value = { name: "Ada", age: 36 };',
        'const nameOnly: Value = { name: "Ada" };',
        "const noName: Value = { age: 36 }; // error",
        'const wrongAge: Value = { name: "Ada", age: "36" }; // error',
        "value.age?.toFixed();",
        "value.age.toFixed(); // error",
      ].join("\n"),
    );
  });

  it("writes required names without a property schema as unknown members", () => {
    expect(jsonSchemaToType({ type: "object", required: ["id"] })).toBe("{ id: unknown }");
  });

  it("turns additionalProperties: true into an index signature of unknown", () => {
    const declarations = declareValue({
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: true,
    });
    expectErrorsOnMarkedLines(
      declarations,
      [
        'const extra: Value = { name: "a", anything: [1, 2] };',
        "value.name.toUpperCase();",
        "value.other.toUpperCase(); // error",
      ].join("\n"),
    );
  });

  it("turns an additionalProperties schema into an index signature the named properties also fit", () => {
    const counts: JsonSchema = {
      type: "object",
      properties: { label: { type: "string" }, note: { type: "string" } },
      required: ["label"],
      additionalProperties: { type: "integer" },
    };
    expectErrorsOnMarkedLines(
      declareValue(counts),
      [
        'const ok: Value = { label: "a", apples: 3, pears: 4 };',
        'const notCount: Value = { label: "a", apples: true }; // error',
        "value.label.toUpperCase();",
      ].join("\n"),
    );
    expect(jsonSchemaToType({ type: "object", additionalProperties: { type: "number" } })).toBe(
      "{ [key: string]: number }",
    );
  });

  it("writes patternProperties as an index signature", () => {
    expectErrorsOnMarkedLines(
      declareValue({ type: "object", patternProperties: { "^x-": { type: "string" } } }),
      ['const ok: Value = { "x-a": "b" };', 'const notText: Value = { "x-a": 1 }; // error'].join("\n"),
    );
  });

  it("writes an object without properties as a record of unknown, or of never when closed", () => {
    expect(jsonSchemaToType({ type: "object" })).toBe("{ [key: string]: unknown }");
    expect(jsonSchemaToType({ type: "object", additionalProperties: false })).toBe("{ [key: string]: never }");
  });

  it("quotes property names that are not identifiers, and they compile", () => {
    const headers: JsonSchema = {
      type: "object",
      properties: {
        "x-request-id": { type: "string" },
        "2fa": { type: "boolean" },
        "with space": { type: "number" },
        "": { type: "null" },
        $ok: { type: "string" },
      },
      required: ["x-request-id", "2fa", "with space", "", "$ok"],
    };
    const type = jsonSchemaToType(headers);
    expect(type).toContain('"x-request-id": string');
    expect(type).toContain('"2fa": boolean');
    expect(type).toContain('"with space": number');
    expect(type).toContain('"": null');
    expect(type).toContain("$ok: string");
    expectErrorsOnMarkedLines(
      declareValue(headers),
      [
        'const ok: Value = { "x-request-id": "r", "2fa": true, "with space": 1, "": null, $ok: "y" };',
        'value["x-request-id"].toUpperCase();',
        'value["2fa"].toUpperCase(); // error',
      ].join("\n"),
    );
  });

  it("infers an object from properties when type is missing", () => {
    expect(jsonSchemaToType({ properties: { a: { type: "string" } }, required: ["a"] })).toBe("{ a: string }");
  });
});

describe("jsonSchemaToType: arrays and tuples", () => {
  it("writes items as an array of that type, parenthesising a union", () => {
    expect(jsonSchemaToType({ type: "array", items: { type: "string" } })).toBe("string[]");
    expect(jsonSchemaToType({ type: "array", items: { type: ["string", "number"] } })).toBe("(string | number)[]");
    expect(jsonSchemaToType({ type: "array" })).toBe("unknown[]");
    expectErrorsOnMarkedLines(
      declareValue({ type: "array", items: { type: ["string", "number"] } }),
      ['const ok: Value = ["a", 1];', "const notAllowed: Value = [true]; // error"].join("\n"),
    );
  });

  it("writes draft 2020-12 prefixItems with items: false as a closed tuple", () => {
    const pair: JsonSchema = { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false };
    expect(jsonSchemaToType(pair)).toBe("[string, number]");
    expectErrorsOnMarkedLines(
      declareValue(pair),
      [
        'const ok: Value = ["a", 1];',
        'const swapped: Value = [1, "a"]; // error',
        'const tooLong: Value = ["a", 1, 2]; // error',
        "value[0].toUpperCase();",
        "value[1].toFixed();",
      ].join("\n"),
    );
  });

  it("writes prefixItems with an items schema as a tuple with a rest element", () => {
    const command: JsonSchema = { type: "array", prefixItems: [{ type: "string" }], items: { type: "boolean" } };
    expect(jsonSchemaToType(command)).toBe("[string, ...boolean[]]");
    expectErrorsOnMarkedLines(
      declareValue(command),
      ['const ok: Value = ["a", true, false];', 'const wrongRest: Value = ["a", 1]; // error'].join("\n"),
    );
  });

  it("leaves a tuple open when nothing closes it, as JSON Schema does", () => {
    expect(jsonSchemaToType({ type: "array", prefixItems: [{ type: "string" }] })).toBe("[string, ...unknown[]]");
  });

  it("writes the draft-07 form (items array + additionalItems) the same way", () => {
    expect(
      jsonSchemaToType({ type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false }),
    ).toBe("[string, number]");
    expect(jsonSchemaToType({ type: "array", items: [{ type: "string" }], additionalItems: { type: "number" } })).toBe(
      "[string, ...number[]]",
    );
    expect(jsonSchemaToType({ type: "array", items: [{ type: "string" }, { type: "number" }], maxItems: 2 })).toBe(
      "[string, number]",
    );
  });

  it("makes elements past minItems optional, parenthesising a union", () => {
    const range: JsonSchema = {
      type: "array",
      prefixItems: [{ type: "number" }, { type: ["number", "null"] }],
      items: false,
      minItems: 1,
    };
    expect(jsonSchemaToType(range)).toBe("[number, (number | null)?]");
    expectErrorsOnMarkedLines(
      declareValue(range),
      ["const one: Value = [1];", "const two: Value = [1, null];", "const none: Value = []; // error"].join("\n"),
    );
  });
});

describe("jsonSchemaToType: enum and const", () => {
  it("writes enum as a union of literals that rejects any other value", () => {
    const state: JsonSchema = { type: "string", enum: ["open", "closed"] };
    expect(jsonSchemaToType(state)).toBe('"open" | "closed"');
    expectErrorsOnMarkedLines(
      declareValue(state),
      ['const open: Value = "open";', 'const merged: Value = "merged"; // error'].join("\n"),
    );
  });

  it("writes numbers, negative numbers, booleans and null in an enum, parenthesising a negative in an array", () => {
    expect(jsonSchemaToType({ enum: [1, -1, true, null] })).toBe("1 | -1 | true | null");
    expect(jsonSchemaToType({ type: "array", items: { const: -1 } })).toBe("(-1)[]");
    expectErrorsOnMarkedLines(
      declareValue({ type: "array", items: { const: -1 } }),
      ["const ok: Value = [-1, -1];", "const other: Value = [1]; // error"].join("\n"),
    );
  });

  it("writes const as one literal, objects and arrays included", () => {
    expect(jsonSchemaToType({ const: "v1" })).toBe('"v1"');
    expect(jsonSchemaToType({ const: { kind: "a", "two words": [1, "x"] } })).toBe(
      '{ kind: "a"; "two words": [1, "x"] }',
    );
    expectErrorsOnMarkedLines(
      declareValue({ type: "object", properties: { version: { const: 2 } }, required: ["version"] }),
      ["const ok: Value = { version: 2 };", "const old: Value = { version: 1 }; // error"].join("\n"),
    );
  });

  it("escapes quotes and line breaks in string literals", () => {
    const quoted: JsonSchema = { enum: ['say "hi"', "two\nlines", "back\\slash"] };
    expectErrorsOnMarkedLines(
      declareValue(quoted),
      ["const ok: Value = 'say \"hi\"';", 'const other: Value = "say hi"; // error'].join("\n"),
    );
  });
});

describe("jsonSchemaToType: composition and nullable", () => {
  it("writes anyOf and oneOf as unions", () => {
    const idOrName: JsonSchema = { anyOf: [{ type: "integer" }, { type: "string" }] };
    expect(jsonSchemaToType(idOrName)).toBe("number | string");
    const shape: JsonSchema = {
      oneOf: [
        {
          type: "object",
          properties: { kind: { const: "circle" }, radius: { type: "number" } },
          required: ["kind", "radius"],
        },
        {
          type: "object",
          properties: { kind: { const: "square" }, side: { type: "number" } },
          required: ["kind", "side"],
        },
      ],
    };
    expectErrorsOnMarkedLines(
      declareValue(shape),
      [
        'const circle: Value = { kind: "circle", radius: 1 };',
        'const square: Value = { kind: "square", side: 2 };',
        'const mixed: Value = { kind: "circle", side: 2 }; // error',
        'if (value.kind === "circle") value.radius.toFixed();',
      ].join("\n"),
    );
  });

  it("writes allOf as an intersection, parenthesising unions", () => {
    const named: JsonSchema = {
      allOf: [
        { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
        { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      ],
    };
    expect(jsonSchemaToType(named)).toBe("{ id: number } & { name: string }");
    expect(jsonSchemaToType({ allOf: [{ type: ["string", "number"] }, { type: ["number", "boolean"] }] })).toBe(
      "(string | number) & (number | boolean)",
    );
    expectErrorsOnMarkedLines(
      declareValue(named),
      ['const both: Value = { id: 1, name: "a" };', "const idOnly: Value = { id: 1 }; // error"].join("\n"),
    );
  });

  it("intersects a base type with its anyOf branches, ignoring branches that say nothing to a type", () => {
    const contact: JsonSchema = {
      type: "object",
      properties: { email: { type: "string" }, phone: { type: "string" } },
      anyOf: [{ required: ["email"] }, { required: ["phone"] }],
    };
    expectErrorsOnMarkedLines(
      declareValue(contact),
      [
        'const byEmail: Value = { email: "a@b.c" };',
        'const byPhone: Value = { phone: "1" };',
        "const neither: Value = {}; // error",
      ].join("\n"),
    );
    expect(jsonSchemaToType({ type: "string", anyOf: [{ format: "email" }, { format: "uri" }] })).toBe("string");
  });

  it("adds null for OpenAPI's nullable: true", () => {
    expect(jsonSchemaToType({ type: "string", nullable: true })).toBe("string | null");
    expectErrorsOnMarkedLines(
      declareValue({
        type: "object",
        properties: { closedAt: { type: "string", nullable: true } },
        required: ["closedAt"],
      }),
      [
        "const open: Value = { closedAt: null };",
        'const closed: Value = { closedAt: "2026-01-01" };',
        "const missing: Value = {}; // error",
      ].join("\n"),
    );
  });
});

describe("jsonSchemaToType: $ref", () => {
  const tree: JsonSchema = {
    type: "object",
    properties: { root: { $ref: "#/$defs/TreeNode" } },
    required: ["root"],
    $defs: {
      TreeNode: {
        type: "object",
        properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/TreeNode" } } },
        required: ["name", "children"],
      },
    },
  };

  it("declares a recursive definition once, by name, and the recursion type-checks", () => {
    const namedTypes = new Map<string, string>();
    expect(jsonSchemaToType(tree, { namedTypes })).toBe("{ root: TreeNode }");
    expect([...namedTypes.keys()]).toEqual(["TreeNode"]);
    expect(namedTypes.get("TreeNode")).toContain("children: TreeNode[]");
    expectErrorsOnMarkedLines(
      declareValue(tree),
      [
        'const ok: Value = { root: { name: "a", children: [{ name: "b", children: [] }] } };',
        'const deepWrong: Value = { root: { name: "a", children: [{ name: 1, children: [] }] } }; // error',
        "value.root.children[0]?.children[0]?.name.toUpperCase();",
      ].join("\n"),
    );
  });

  it("resolves draft-07 definitions the same way", () => {
    const namedTypes = new Map<string, string>();
    const schema: JsonSchema = {
      type: "array",
      items: { $ref: "#/definitions/user-name" },
      definitions: { "user-name": { type: "string" } },
    };
    expect(jsonSchemaToType(schema, { namedTypes })).toBe("UserName[]");
    expect(namedTypes.get("UserName")).toBe("string");
    expectCompiles(declareValue(schema), 'const names: Value = ["a"];');
  });

  it("writes definitions inline without a namedTypes map, and a recursion point as unknown", () => {
    expect(jsonSchemaToType(tree)).toBe("{ root: { name: string; children: unknown[] } }");
  });

  it("names a schema that refers to itself as a whole ($ref: '#')", () => {
    const list: JsonSchema = {
      type: "object",
      properties: { value: { type: "number" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } },
      required: ["value", "next"],
    };
    const namedTypes = new Map<string, string>();
    expect(jsonSchemaToType(list, { namedTypes, rootTypeName: "ListNode" })).toBe("ListNode");
    expect(namedTypes.get("ListNode")).toBe("{ value: number; next: ListNode | null }");
    expectErrorsOnMarkedLines(
      declareValue(list, { rootTypeName: "ListNode" }),
      [
        "const ok: Value = { value: 1, next: { value: 2, next: null } };",
        'const wrong: Value = { value: 1, next: { value: "2", next: null } }; // error',
      ].join("\n"),
    );
  });

  it("writes unknown for a reference it cannot follow", () => {
    expect(jsonSchemaToType({ $ref: "https://example.com/schema.json" })).toBe("unknown");
    expect(jsonSchemaToType({ $ref: "#/$defs/Missing" })).toBe("unknown");
    expect(jsonSchemaToType({ $ref: "#/$defs/%E0%A4%A" })).toBe("unknown");
  });

  it("stops at a JavaScript object that contains itself instead of recursing forever", () => {
    const cyclic: JsonSchema = { type: "object", properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    const loop: JsonSchema = { anyOf: [{ type: "string" }] };
    (loop.anyOf as unknown[]).push(loop);
    expect(jsonSchemaToType(cyclic)).toBe("{ self?: unknown }");
    expect(jsonSchemaToType(loop)).toBe("unknown");
  });

  it("follows JSON Pointer escapes in a reference", () => {
    expect(jsonSchemaToType({ $ref: "#/$defs/a~1b", $defs: { "a/b": { type: "boolean" } } })).toBe("boolean");
  });

  it("shares one name for the same definition across schemas, and numbers a different one", () => {
    const namedTypes = new Map<string, string>();
    const user: JsonSchema = { type: "object", properties: { id: { type: "integer" } }, required: ["id"] };
    const otherUser: JsonSchema = { type: "object", properties: { login: { type: "string" } }, required: ["login"] };
    expect(jsonSchemaToType({ $ref: "#/$defs/User", $defs: { User: user } }, { namedTypes })).toBe("User");
    expect(
      jsonSchemaToType({ type: "array", items: { $ref: "#/$defs/User" }, $defs: { User: user } }, { namedTypes }),
    ).toBe("User[]");
    expect(jsonSchemaToType({ $ref: "#/$defs/User", $defs: { User: otherUser } }, { namedTypes })).toBe("User2");
    expect([...namedTypes]).toEqual([
      ["User", "{ id: number }"],
      ["User2", "{ login: string }"],
    ]);
  });
});

describe("jsonSchemaToType: documentation", () => {
  const issue: JsonSchema = {
    type: "object",
    properties: {
      repo: { type: "string", description: "The repository as owner/name.\nFor example acme/web." },
      title: { type: "string", description: "Ends a comment */ if not escaped", minLength: 1, maxLength: 256 },
      due: { type: "string", format: "date-time" },
      count: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 },
      priority: { type: "integer", minimum: 1, maximum: 5, default: 3, deprecated: true },
    },
    required: ["repo", "title"],
  };

  it("writes descriptions as doc comments on their properties, escaping */, and still compiles", () => {
    const type = jsonSchemaToType(issue);
    expect(type).toContain(
      "/**\n   * The repository as owner/name.\n   * For example acme/web.\n   */\n  repo: string;",
    );
    expect(type).toContain("Ends a comment *\\/ if not escaped");
    expect(type).not.toContain("comment */");
    expectCompiles(declareValue(issue), 'const ok: Value = { repo: "a/b", title: "t" };');
  });

  it("shows the description and constraints where an editor shows a property's documentation", () => {
    const declarations = declareValue(issue);
    expect(documentationOf(declarations, "value.repo")).toBe("The repository as owner/name.\nFor example acme/web.");
    expect(documentationOf(declarations, "value.title")).toBe(
      "Ends a comment *\\/ if not escaped\n@minLength 1\n@maxLength 256",
    );
    expect(documentationOf(declarations, "value.due")).toBe("@format date-time");
    expect(documentationOf(declarations, "value.priority")).toBe("@minimum 1\n@maximum 5\n@default 3\n@deprecated");
  });

  it("leaves out the ±MAX_SAFE_INTEGER bounds zod writes for every integer", () => {
    expect(jsonSchemaToType(issue)).toContain("count?: number");
    expect(jsonSchemaToType(issue)).not.toContain("9007199254740991");
  });

  it("uses the title when there is no description", () => {
    expect(jsonSchemaToType({ type: "object", properties: { a: { type: "string", title: "The A" } } })).toContain(
      "/** The A */",
    );
  });
});

describe("jsonSchemaToType: depth limit", () => {
  function nested(levels: number): JsonSchema {
    let schema: JsonSchema = { type: "string" };
    for (let level = 0; level < levels; level++)
      schema = { type: "object", properties: { inner: schema }, required: ["inner"] };
    return schema;
  }

  it("writes 8 levels of objects by default and unknown beyond them", () => {
    const eight = jsonSchemaToType(nested(8));
    expect(eight).toContain("inner: string");
    const ten = jsonSchemaToType(nested(10));
    expect(ten).not.toContain("string");
    expect(ten.match(/inner:/g)).toHaveLength(8);
    expect(ten).toContain("inner: unknown");
    expectErrorsOnMarkedLines(
      declareValue(nested(10)),
      [
        "const anything: Value = { inner: { inner: { inner: { inner: { inner: { inner: { inner: { inner: 42 } } } } } } } };",
        "const shallow: Value = { inner: 1 }; // error",
      ].join("\n"),
    );
  });

  it("takes another limit from maxDepth", () => {
    expect(jsonSchemaToType(nested(3), { maxDepth: 1 })).toBe("{ inner: unknown }");
    expect(
      jsonSchemaToType({ type: "array", items: { type: "array", items: { type: "string" } } }, { maxDepth: 1 }),
    ).toBe("unknown[]");
    expect(
      jsonSchemaToType({ type: "array", items: { type: "array", items: { type: "string" } } }, { maxDepth: 2 }),
    ).toBe("string[][]");
  });
});

describe("jsonSchemaToType: deterministic output", () => {
  it("gives the same text for the same schema every time", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { b: { $ref: "#/$defs/B" }, a: { enum: ["x", "y"] } },
      $defs: { B: { type: "object", properties: { self: { $ref: "#/$defs/B" } } } },
    };
    const first = new Map<string, string>();
    const second = new Map<string, string>();
    expect(jsonSchemaToType(schema, { namedTypes: first })).toBe(
      jsonSchemaToType(structuredClone(schema), { namedTypes: second }),
    );
    expect([...first]).toEqual([...second]);
  });
});

describe("toolDeclaration", () => {
  it("declares a method from inputSchema and outputSchema with its description", () => {
    const short = tool({
      description: "Create an issue.",
      inputSchema: {
        type: "object",
        properties: { repo: { type: "string" }, title: { type: "string" } },
        required: ["repo", "title"],
      },
      outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
    });
    expect(toolDeclaration("github", "create_issue", short)).toBe(
      "/** Create an issue. */\ncreate_issue(args: { repo: string; title: string }): Promise<{ number: number }>;",
    );
  });

  it("accepts a correct call and rejects a wrong property type, a missing property and a wrong enum literal", () => {
    expectErrorsOnMarkedLines(
      declareMethod("github", "create_issue", createIssue),
      [
        'github.create_issue({ repo: "a", title: "b" }).then((issue) => issue.number.toFixed());',
        'github.create_issue({ repo: "a", title: "b", labels: ["bug"] });',
        'github.create_issue({ repo: "a", title: 7 }); // error',
        'github.create_issue({ repo: "a" }); // error',
        'github.create_issue({ repo: "a", title: "b", labels: ["question"] }); // error',
        'github.create_issue({ repo: "a", title: "b" }).then((issue) => issue.title); // error',
        "github.delete_repo({}); // error",
      ].join("\n"),
    );
  });

  it("tells in the doc comment that a call needs approval", () => {
    const approved = toolDeclaration("github", "create_issue", { ...createIssue, requiresApproval: true });
    expect(approved).toContain("Needs approval");
    const sometimes = toolDeclaration("github", "create_issue", { ...createIssue, requiresApproval: () => true });
    expect(sometimes).toContain("May need approval");
    expect(toolDeclaration("github", "create_issue", createIssue)).not.toContain("approval");
  });

  it("takes any object argument and an unknown result when the tool has no schemas", () => {
    const bare = tool({ description: "Ping." });
    expect(toolDeclaration("health", "ping", bare)).toBe(
      "/** Ping. */\nping(args?: { [key: string]: unknown }): Promise<unknown>;",
    );
    expectErrorsOnMarkedLines(
      declareMethod("health", "ping", bare),
      [
        "health.ping();",
        "health.ping({ verbose: true }).then((result) => String(result));",
        "health.ping().then((result) => result.ok); // error",
      ].join("\n"),
    );
  });

  it("lets a call leave out an argument whose properties are all optional", () => {
    const list = tool({ inputSchema: { type: "object", properties: { state: { enum: ["open", "closed"] } } } });
    expectErrorsOnMarkedLines(
      declareMethod("github", "list_issues", list),
      [
        "github.list_issues();",
        'github.list_issues({ state: "open" });',
        'github.list_issues({ state: "all" }); // error',
      ].join("\n"),
    );
  });

  it("declares a recursive input through its connector's namespace", () => {
    const walk = tool({
      inputSchema: {
        $ref: "#/$defs/Folder",
        $defs: {
          Folder: {
            type: "object",
            properties: { name: { type: "string" }, folders: { type: "array", items: { $ref: "#/$defs/Folder" } } },
            required: ["name"],
          },
        },
      },
    });
    const namedTypes = new Map<string, string>();
    expect(toolDeclaration("files", "walk", walk, { namedTypes })).toBe("walk(args: files.Folder): Promise<unknown>;");
    expect(namedTypes.get("Folder")).toBe("{ name: string; folders?: Folder[] }");
    expectErrorsOnMarkedLines(
      declareMethod("files", "walk", walk),
      [
        'files.walk({ name: "a", folders: [{ name: "b", folders: [] }] });',
        'files.walk({ name: "a", folders: [{ folders: [] }] }); // error',
      ].join("\n"),
    );
  });
});

describe("toolDeclaration: Standard Schema inputs", () => {
  const zodIssue = tool({
    description: "Create an issue.",
    inputSchema: z.object({
      repo: z.string().describe("owner/name"),
      title: z.string().min(1),
      priority: z.enum(["low", "high"]).optional(),
      due: z.string().datetime().nullable().optional(),
    }),
    outputSchema: z.object({ number: z.number().int(), labels: z.array(z.string()) }),
  });

  it("uses zod's JSON Schema (Standard JSON Schema) for input and output", () => {
    const declaration = toolDeclaration("github", "create_issue", zodIssue);
    expect(declaration).toContain("repo: string");
    expect(declaration).toContain('priority?: "low" | "high"');
    expect(declaration).toContain("Promise<{ number: number; labels: string[] }>");
    expect(declaration).toContain("/** owner/name */");
    expectErrorsOnMarkedLines(
      declareMethod("github", "create_issue", zodIssue),
      [
        'github.create_issue({ repo: "a", title: "b" }).then((issue) => issue.number.toFixed() + issue.labels.join());',
        'github.create_issue({ repo: "a", title: "b", priority: "high", due: null });',
        'github.create_issue({ repo: "a", title: 1 }); // error',
        'github.create_issue({ title: "b" }); // error',
        'github.create_issue({ repo: "a", title: "b", priority: "urgent" }); // error',
      ].join("\n"),
    );
  });

  it("writes zod's input type for the argument and its output type for the result", () => {
    const defaults = tool({
      inputSchema: z.object({ page: z.number().default(1) }),
      outputSchema: z.object({ page: z.number().default(1) }),
    });
    const declaration = toolDeclaration("api", "list", defaults);
    expect(declaration).toBe(
      "list(args?: {\n  /** @default 1 */\n  page?: number;\n}): Promise<{\n  /** @default 1 */\n  page: number;\n}>;",
    );
  });

  it("declares zod's recursive schemas by name", () => {
    const Category: z.ZodType<{ name: string; children: { name: string; children: unknown[] }[] }> = z.object({
      name: z.string(),
      get children() {
        return z.array(Category);
      },
    });
    const classify = tool({ inputSchema: z.object({ primary: Category, secondary: Category.optional() }) });
    const declarations = declareMethod("shop", "classify", classify);
    expect(declarations).toContain("declare namespace shop {");
    expectErrorsOnMarkedLines(
      declarations,
      [
        'shop.classify({ primary: { name: "a", children: [{ name: "b", children: [] }] } });',
        'shop.classify({ primary: { name: "a", children: [{ name: 2, children: [] }] } }); // error',
      ].join("\n"),
    );
    const Comment: z.ZodType = z.lazy(() => z.object({ text: z.string(), replies: z.array(Comment) }));
    const reply = toolDeclaration("forum", "reply", tool({ inputSchema: Comment }), { namedTypes: new Map() });
    expect(reply).toBe("reply(args: forum.ReplyArgs): Promise<unknown>;");
  });

  it("writes unknown for a zod schema JSON Schema cannot express", () => {
    const dated = tool({ inputSchema: z.object({ when: z.date() }) });
    expect(toolDeclaration("calendar", "book", dated)).toBe("book(args?: unknown): Promise<unknown>;");
  });

  it("asks convertStandardSchema first, falls back when it fails, and writes unknown when nothing converts", () => {
    const handMade: StandardSchemaV1 = {
      "~standard": { version: 1, vendor: "hand-made", validate: (value) => ({ value }) },
    };
    const converted = toolDeclaration("api", "send", tool({ inputSchema: handMade }), {
      convertStandardSchema: (schema, direction) =>
        schema["~standard"].vendor === "hand-made" && direction === "input"
          ? { type: "object", properties: { to: { type: "string" } }, required: ["to"] }
          : undefined,
    });
    expect(converted).toBe("send(args: { to: string }): Promise<unknown>;");
    expect(toolDeclaration("api", "send", tool({ inputSchema: handMade, outputSchema: handMade }))).toBe(
      "send(args?: unknown): Promise<unknown>;",
    );
    const failing = toolDeclaration("api", "send", tool({ inputSchema: z.object({ to: z.string() }) }), {
      convertStandardSchema: () => {
        throw new Error("not this one");
      },
    });
    expect(failing).toBe("send(args: { to: string }): Promise<unknown>;");
  });
});

describe("connectorDeclaration and runtimeDeclarations", () => {
  const folderSchema = (property: string): JsonSchema => ({
    $ref: "#/$defs/Node",
    $defs: {
      Node: {
        type: "object",
        properties: { [property]: { type: "string" }, nodes: { type: "array", items: { $ref: "#/$defs/Node" } } },
        required: [property],
      },
    },
  });
  const github = defineConnector({
    name: "github",
    instructions: "Use for GitHub issues and pull requests.",
    tools: {
      create_issue: { ...createIssue, requiresApproval: true },
      tree: tool({ inputSchema: folderSchema("path"), outputSchema: folderSchema("path") }),
      labels: tool({ inputSchema: folderSchema("label") }),
    },
  });
  const drive = defineConnector({
    name: "drive",
    tools: { tree: tool({ inputSchema: folderSchema("fileId") }) },
  });

  it("declares the connector global with its instructions as the doc comment", () => {
    const declaration = connectorDeclaration(github);
    expect(declaration).toContain("/** Use for GitHub issues and pull requests. */\ndeclare const github: {\n");
    expect(declaration).toContain("  create_issue(args: {");
    expect(declaration).toContain("declare namespace github {\n  type Node = ");
    expect(declaration).toContain("  type Node2 = ");
    expectErrorsOnMarkedLines(
      declaration,
      [
        'github.tree({ path: "/" }).then((node) => node.nodes?.[0]?.path.toUpperCase());',
        'github.labels({ label: "bug", nodes: [{ label: "ui" }] });',
        'github.labels({ path: "/" }); // error',
      ].join("\n"),
    );
  });

  it("declares only the methods asked for", () => {
    const declaration = connectorDeclaration(github, { methods: ["create_issue"] });
    expect(declaration).not.toContain("tree(");
    expect(declaration).not.toContain("namespace");
    expectCompiles(declaration, 'github.create_issue({ repo: "a", title: "b" });');
  });

  it("declares a connector without tools as an empty object", () => {
    const empty = defineConnector({ name: "nothing", tools: {} });
    expect(connectorDeclaration(empty)).toBe("declare const nothing: {};");
  });

  it("declares every connector and codemode so that a whole program type-checks", () => {
    const declarations = runtimeDeclarations([github, drive]);
    expect(declarations.endsWith(CODEMODE_DECLARATION)).toBe(true);
    expectErrorsOnMarkedLines(
      declarations,
      [
        "async function main() {",
        '  const found = await codemode.search("open issues");',
        "  const first = found.results[0];",
        "  if (first !== undefined && !first.requiresApproval) await codemode.describe(first.path).then((described) => ('declaration' in described ? described.declaration.trim() : described));",
        '  const stamp = await codemode.step("stamp", () => Date.now());',
        '  const later = await codemode.step("later", async () => "x");',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: test data, the model's program source holds its own template literal
        '  const issue = await github.create_issue({ repo: "acme/web", title: `Triage at ${stamp.toFixed()} ${later.toUpperCase()}` });',
        '  await drive.tree({ fileId: "root", nodes: [{ fileId: "child" }] });',
        '  await codemode.run("triage", { issue: issue.number });',
        '  await codemode.run("triage");',
        "  await codemode.search(42); // error",
        '  await drive.tree({ path: "/" }); // error',
        "  stamp.toUpperCase(); // error",
        "}",
      ].join("\n"),
    );
  });
});
