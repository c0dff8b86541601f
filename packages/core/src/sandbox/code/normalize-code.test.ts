import type * as acorn from "acorn";
import { describe, expect, it, vi } from "vitest";
import { normalizeCode } from "./normalize-code.js";

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
  parameter: string,
  body: string,
) => (input?: unknown) => Promise<unknown>;

/** Normalizes and runs the body the way the executor wraps it (without a sandbox: trusted test code only). */
async function runBody(code: string): Promise<unknown> {
  const normalized = normalizeCode(code);
  if (!normalized.ok)
    throw new Error(`unexpected syntax error: ${normalized.message} (${normalized.line}:${normalized.column})`);
  return new AsyncFunction("input", `\n${normalized.body}\n`)();
}

function syntaxError(code: string): { message: string; line: number; column: number } {
  const normalized = normalizeCode(code);
  if (normalized.ok) throw new Error(`expected a syntax error, got body:\n${normalized.body}`);
  return normalized;
}

/** 1-based line and column of `needle` in `text`, as an editor shows them. */
function positionOf(text: string, needle: string): { line: number; column: number } {
  const index = text.indexOf(needle);
  if (index < 0) throw new Error(`"${needle}" not in text`);
  const before = text.slice(0, index);
  const line = before.split("\n").length;
  return { line, column: index - before.lastIndexOf("\n") };
}

describe("code forms (R-SB-2)", () => {
  // [what it shows, a program, what it returns]: each a test of its own.
  const forms: Array<[string, string, unknown]> = [
    ["runs an async arrow function", "async () => { const a = 20; return a + 22; }", 42],
    ["runs an async arrow with an expression body and a trailing comment", "async () => 6 * 7 // the answer", 42],
    [
      "takes the last expression of a body of statements as the result",
      "const items = [1, 2, 3];\nlet total = 0;\nfor (const item of items) total += item;\ntotal * 2",
      12,
    ],
    [
      "accepts top-level await and an explicit return in a body",
      "const value = await Promise.resolve(5);\nif (value > 1) return 'big';\n'small'",
      "big",
    ],
    ["returns undefined when the body ends with a declaration", "const a = 1;", undefined],
    ["keeps a directive prologue a directive", "'use strict';\nconst x = 3;\nx", 3],
    [
      "runs a trailing async arrow after helper declarations",
      "const double = (n) => n * 2;\nfunction inc(n) { return n + 1; }\nasync () => double(inc(20))",
      42,
    ],
    ["runs a lone async function declaration", "async function main() {\n  return 'main ran';\n}", "main ran"],
  ];
  it.each(forms)("%s", async (_shows, program, expected) => {
    expect(await runBody(program)).toBe(expected);
  });

  it("runs a plain arrow and a function expression", async () => {
    expect(await runBody("() => 'arrow'")).toBe("arrow");
    expect(await runBody("(async function () { return 'expression'; })")).toBe("expression");
  });

  it("takes a lone string literal as the result, as eval would", async () => {
    expect(await runBody("'just text'")).toBe("just text");
    expect(await runBody("'use strict';\n'second'")).toBe("second");
  });

  it("accepts export default of an async function, a function, an arrow and a value", async () => {
    expect(await runBody("export default async function () { return 1; }")).toBe(1);
    expect(await runBody("export default function main() { return 2; }")).toBe(2);
    expect(await runBody("export default async () => 3;")).toBe(3);
    expect(await runBody("const helper = (n) => n * 2;\nexport default helper(2);")).toBe(4);
  });

  it("refuses named exports and imports with a position", () => {
    expect(syntaxError("const a = 1;\nexport const b = 2;")).toMatchObject({
      message: expect.stringContaining("only `export default`"),
      line: 2,
      column: 1,
    });
    expect(syntaxError("import fs from 'node:fs';\nfs")).toMatchObject({
      message: expect.stringContaining("import declarations are not available"),
      line: 1,
      column: 1,
    });
    expect(syntaxError("const a = 1;\n  import('x');\n  import x from 'x';")).toMatchObject({ line: 3, column: 3 });
  });

  it("accepts a hashbang line", async () => {
    expect(await runBody("#!/usr/bin/env node\n1 + 1")).toBe(2);
  });
});

describe("Markdown fences (R-SB-2)", () => {
  it("runs code inside ```js, ```javascript, ``` and ~~~ fences", async () => {
    expect(await runBody("```js\nconst a = 1;\na + 1\n```")).toBe(2);
    expect(await runBody("```javascript\nasync () => 'js'\n```")).toBe("js");
    expect(await runBody("```\n'bare'\n```")).toBe("bare");
    expect(await runBody("~~~\n'tilde'\n~~~")).toBe("tilde");
  });

  it("ignores prose before and after the fence", async () => {
    expect(await runBody("Here is the program:\n\n```ts\nconst n: number = 4;\nn * 10\n```\n\nIt returns forty.")).toBe(
      40,
    );
  });

  it("takes a one-word line before the fence as prose", async () => {
    expect(await runBody("Sure\n```js\n1 + 2\n```")).toBe(3);
  });

  it("runs ```ts and ```typescript fences as TypeScript", async () => {
    const ts = normalizeCode("```typescript\nconst n: number = 1;\nn\n```");
    expect(ts).toMatchObject({ ok: true, language: "typescript", lineOffset: 1 });
    expect(await runBody("```ts\nconst label: string = 'typed';\nlabel\n```")).toBe("typed");
  });

  it("accepts a fence without its closing line", async () => {
    expect(await runBody("```js\n7 * 6\n")).toBe(42);
  });

  it("reports a syntax error in a fence at its line in the original text", () => {
    const code = "Let me list the issues.\n\n```js\nconst issues = [];\nconst broken = ;\n```";
    expect(syntaxError(code)).toMatchObject({ ...positionOf(code, ";\n```"), message: expect.any(String) });
    expect(syntaxError(code).line).toBe(5);
  });

  it("reports a TypeScript syntax error in a fence at its line and column in the original text", () => {
    const code = "Plan:\n1. list\n\n```ts\nconst a: number = 1;\nlet x = {;\n```";
    expect(syntaxError(code)).toMatchObject(positionOf(code, ";\n```"));
  });

  it("leaves a fence inside a template literal to the program", async () => {
    const code = "async () => {\n  const body = `Steps:\n~~~js\nrun()\n~~~\n`;\n  return body.includes('run()');\n}";
    expect(await runBody(code)).toBe(true);
  });

  it("leaves a fence inside a block comment to the program", async () => {
    const code = "/*\n```js\nexample()\n```\n*/\nasync () => 'the real program'";
    expect(await runBody(code)).toBe("the real program");
  });

  it("gives the line offset of the fenced code", () => {
    expect(normalizeCode("intro\n\n```js\n1\n```")).toMatchObject({ ok: true, lineOffset: 3 });
    expect(normalizeCode("1")).toMatchObject({ ok: true, lineOffset: 0 });
  });
});

describe("TypeScript (R-SB-2, beyond)", () => {
  it("strips interfaces, type aliases, annotations, `as`, generics and non-null assertions", async () => {
    const code = [
      "interface Issue { id: number; title: string }",
      "type Id = Issue['id'];",
      "function first<T>(items: T[]): T | undefined { return items[0]; }",
      "const issues: Issue[] = [{ id: 7, title: 'x' }];",
      "const id = (first<Issue>(issues)!.id as Id) satisfies number;",
      "id",
    ].join("\n");
    expect(normalizeCode(code)).toMatchObject({ ok: true, language: "typescript" });
    expect(await runBody(code)).toBe(7);
  });

  it("runs an async arrow with typed parameters and return type", async () => {
    expect(await runBody("async (): Promise<number> => {\n  const n: number = 2;\n  return n;\n}")).toBe(2);
  });

  it("transforms an enum", async () => {
    expect(await runBody("enum Color { Red, Green }\nColor.Green")).toBe(1);
  });

  it("drops type-only imports", async () => {
    expect(await runBody("import type { Issue } from '../issue';\nconst i: Issue | null = null;\ni")).toBeNull();
  });

  it("keeps lines and columns where they were when stripping types", () => {
    const code = "const a: number = 1;\nconst b: string = 'x';\nconst c = a +;";
    // "const c = a +;" — the stray ";" is at column 14 of line 3.
    expect(syntaxError(code)).toMatchObject({ line: 3, column: 14 });
  });

  it("plain JavaScript stays JavaScript", () => {
    expect(normalizeCode("const a = 1;\na")).toMatchObject({ ok: true, language: "javascript" });
  });
});

describe("syntax errors carry the line and column where the error is (R-SB-2)", () => {
  // [name, code, the text the error's position must point at]
  const pointed: Array<[string, string, string]> = [
    ["in a multi-line async arrow", "async () => {\n  const a = 1;\n  const b = a +* 2;\n  return b;\n}", "* 2"],
    ["in a one-line async arrow", "async () => { const b = a +* 2; }", "* 2"],
    [
      "in a multi-line TypeScript async arrow with a return type",
      "\n  async (): Promise<number> => {\n  const a: number = 1;\n  const b = a +* 2;\n  return b;\n}",
      "* 2",
    ],
    [
      "in an async arrow with typed destructured parameters",
      "async ({ repo }: { repo: string }) => {\n  const issues = await list(repo);\n  let x = {;\n}",
      ";\n}",
    ],
    ["in a body of statements", "const x = 1;\nconst y = 2;\n\nif (x > y {\n  x\n}", "{\n  x"],
  ];
  for (const [name, code, at] of pointed) {
    it(name, () => {
      expect(syntaxError(code)).toMatchObject(positionOf(code, at));
    });
  }

  it("an unterminated string", () => {
    const code = "const a = 1;\nconst s = 'open\nconst c = 3;";
    expect(syntaxError(code)).toMatchObject({ line: 2 });
  });

  it("a redeclared binding points at the second declaration", () => {
    const code = "let total = 1;\nlet other = 2;\nlet total = 3;";
    expect(syntaxError(code)).toMatchObject({
      line: 3,
      column: 5,
      message: expect.stringContaining("already been declared"),
    });
  });

  it("an unbalanced closing brace", () => {
    const code = "const a = 1;\n}\na";
    expect(syntaxError(code)).toMatchObject({ line: 2, column: 1 });
  });
});

describe("the body cannot leave the function it runs in", () => {
  it("refuses a closing of the wrapper written directly", () => {
    const error = syntaxError('}); (() => "R1")(async () => {');
    expect(error.line).toBe(1);
  });

  it("refuses module-only grammar that would close the wrapper in a script (HTML-like comment)", () => {
    // As a module, `<!--` is `< !--`; in the script the executor compiles it opens a comment, so
    // the second line would close `async () => {` and run outside it.
    const code = 'export default 1;\nx = a <!--b[`\n}); (() => "Rforged")(async () => {\n//`];';
    const error = syntaxError(code);
    expect(error.line).toBeGreaterThanOrEqual(1);
    expect(error.line).toBeLessThanOrEqual(4);
  });

  it("refuses the same trick without export default", () => {
    syntaxError('x = a <!--b[`\n)}); (() => "Rforged")(async () => {\n//`]');
  });

  it("every accepted body parses inside `async () => {…}` as one function", () => {
    const forms = [
      "async () => 1",
      "1 + 1",
      "export default async function () { return 1 }",
      "```ts\nconst a: number = 1;\na\n```",
      "const a = 1; // trailing comment",
      "async () => { return 1 } /* trailing block comment */",
      "async () => 1 // comment\n",
    ];
    for (const code of forms) {
      const normalized = normalizeCode(code);
      expect(normalized.ok).toBe(true);
      if (normalized.ok) expect(() => new AsyncFunction("input", `\n${normalized.body}\n`)).not.toThrow();
    }
  });

  it("an unterminated block comment is a syntax error, not a way to swallow the wrapper", () => {
    expect(syntaxError("async () => { return 1 } /* open").line).toBe(1);
  });
});

describe("reading code costs one parse per grammar (hardening round two, finding 11)", () => {
  /** Every parse and type strip `normalizeCode` makes, as "<reader> <grammar> <text>" lines. */
  async function readsOf(code: string): Promise<{ reads: string[]; normalized: ReturnType<typeof normalizeCode> }> {
    const { LinearParser } = await import("./linear-acorn.js");
    const stripper = await import("./type-stripper.js");
    const reads: string[] = [];
    const parse = LinearParser.parse.bind(LinearParser);
    const strip = stripper.stripTypeScript;
    vi.spyOn(LinearParser, "parse").mockImplementation((input: string, options: acorn.Options) => {
      reads.push(`acorn ${options.sourceType ?? "script"} ${input.length}:${hash(input)}`);
      return parse(input, options);
    });
    vi.spyOn(stripper, "stripTypeScript").mockImplementation((input, mode) => {
      reads.push(`swc ${mode} ${input.length}:${hash(input)}`);
      return strip(input, mode);
    });
    try {
      return { reads, normalized: normalizeCode(code) };
    } finally {
      vi.restoreAllMocks();
    }
  }

  it("a fence line inside a comment and a trailing type annotation: each text read at most once per grammar", async () => {
    const code = [
      "async () => {",
      "  // ~~~ not a fence: a comment",
      "  const total: number = 40 + 2;",
      "  return total;",
      "}",
      "const unused: string = 'x'",
    ].join("\n");
    const { reads, normalized } = await readsOf(code);
    expect(normalized).toMatchObject({ ok: true, language: "typescript" });
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads).size).toBe(reads.length);
    // The code itself: script and module once each, and one strip; then the stripped text once.
    expect(reads.filter((read) => read.startsWith("swc"))).toHaveLength(1);
    expect(reads.filter((read) => read.startsWith("acorn"))).toHaveLength(3);
  });

  it("a program that no grammar reads stops at the first definitive failure", async () => {
    const code = ["async () => {", "  // ~~~", "  const broken: number = (1 + ;", "}"].join("\n");
    const { reads, normalized } = await readsOf(code);
    expect(normalized).toMatchObject({ ok: false, line: 3 });
    expect(new Set(reads).size).toBe(reads.length);
    // No transform after an invalid strip; the arrow head is read once more to place the error.
    expect(reads.filter((read) => read.startsWith("swc transform"))).toEqual([]);
    expect(reads.filter((read) => read.startsWith("swc strip-only"))).toHaveLength(2);
  });
});

function hash(text: string): string {
  let value = 0;
  for (let index = 0; index < text.length; index++) value = (value * 31 + text.charCodeAt(index)) | 0;
  return value.toString(16);
}
