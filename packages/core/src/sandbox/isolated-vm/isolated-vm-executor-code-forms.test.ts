/** The isolated-vm executor: the forms of code a model writes, and where their errors point. */
import { describe, expect, it } from "vitest";
import { expectFailed, expectReturned, isolatedVmExecutorForTests, onQuickJs } from "../pass-fixtures.js";

const { run } = isolatedVmExecutorForTests();

describe("R-SB-2 code forms", () => {
  const forms: Array<[string, string, unknown]> = [
    ["an async arrow", "async () => {\n  const issue = await github.get({ id: 7 });\n  return issue.args.id;\n}", 7],
    ["an async arrow with an expression body", "async () => (await github.get({ id: 8 })).args.id", 8],
    ["a plain function expression", "(function () { return 'plain'; })", "plain"],
    [
      "a function body whose last expression is the result",
      "const issue = await github.get({ id: 9 });\nconst doubled = issue.args.id * 2;\ndoubled",
      18,
    ],
    [
      "a body with an explicit return",
      "const a = await github.get({});\nif (a.seq === 0) return 'first';\n'not reached'",
      "first",
    ],
    [
      "a ```js fence with prose around it",
      "Here you go:\n\n```js\nconst r = await github.get({ id: 1 });\nr.args.id + 1\n```\nDone.",
      2,
    ],
    ["a ```ts fence", "```ts\nconst r: { args: { id: number } } = await github.get({ id: 2 });\nr.args.id\n```", 2],
    ["a ```typescript fence", "```typescript\nasync (): Promise<string> => 'typed'\n```", "typed"],
    [
      "export default async function",
      "export default async function main() {\n  return (await github.get({ id: 3 })).args.id;\n}",
      3,
    ],
    ["export default function", "export default function () { return 'sync function'; }", "sync function"],
    ["export default arrow", "export default async () => 'arrow';", "arrow"],
    ["export default value", "const total = 40 + 2;\nexport default total;", 42],
    [
      "TypeScript with an interface, annotations, `as`, generics and an enum",
      [
        "interface Issue { seq: number; args: { id: number } }",
        "enum Level { Low = 1, High = 5 }",
        "function pick<T, K extends keyof T>(item: T, key: K): T[K] { return item[key]; }",
        "async (): Promise<number> => {",
        "  const issue = (await github.get({ id: 4 })) as Issue;",
        "  const id: number = pick(issue, 'args').id;",
        "  return id * Level.High;",
        "}",
      ].join("\n"),
      20,
    ],
  ];
  for (const [name, code, expected] of forms) {
    it(`R-SB-2: runs ${name}`, async () => {
      expect(expectReturned(await run(code))).toEqual(expected);
    });
  }

  it("R-SB-2: a body of statements without a final expression returns undefined", async () => {
    const outcome = await run("const a = 1;\nlet b = a + 1;");
    expect(outcome.result).toEqual({ status: "returned", value: "", logs: [] });
  });

  // quickjs-ng records where some expressions are, not all: a property read after an await is
  // placed at the await, one in a declaration's initializer at the function. Its errors carry a
  // line where it knows one; these rows then check the message only.
  const QUICKJS_IMPRECISE = /^TypeError: cannot read property/;

  // [test name, program, failure code, what the error message must match]
  // One row per test; the test is written once, below.
  const positioned: Array<[string, string, string, RegExp]> = [
    [
      "R-SB-2: SYNTAX_ERROR carries the line and column of the error in a multi-line arrow",
      // Line 3 is "  const count = issues.length +* 2;": the stray "*" is at column 32.
      "async () => {\n  const issues = await github.get({});\n  const count = issues.length +* 2;\n  return count;\n}",
      "SYNTAX_ERROR",
      /\(line 3, column 32\)$/,
    ],
    [
      "R-SB-2: SYNTAX_ERROR in a body of statements carries line and column",
      "const a = 1;\nconst b = 2;\nif (a < b {\n  a\n}",
      "SYNTAX_ERROR",
      /\(line 3, column 11\)$/,
    ],
    [
      "R-SB-2: SYNTAX_ERROR in a Markdown fence counts lines in the original text",
      "I will fetch the issue first.\n\nThen count.\n\n```js\nconst issue = await github.get({});\nconst x = (1;\n```",
      "SYNTAX_ERROR",
      /\(line 7, column 13\)$/,
    ],
    [
      "R-SB-2: SYNTAX_ERROR in TypeScript points into what the model wrote",
      "```ts\nconst a: number = 1;\nconst b: string = 'x';\nlet c = {;\n```",
      "SYNTAX_ERROR",
      /\(line 4, column 10\)$/,
    ],
    [
      "R-SB-2: a runtime error carries the line where it was thrown",
      "async () => {\n  const a = 1;\n  const b = 2;\n  throw new Error('boom at four');\n}",
      "PROGRAM_ERROR",
      /^Error: boom at four \(line 4, column \d+\)$/,
    ],
    [
      "R-SB-2: a runtime error in a fence carries the line in the original text",
      "Plan:\n- get\n\n```js\nconst a = await github.get({});\na.missing.deeper\n```",
      "PROGRAM_ERROR",
      onQuickJs ? QUICKJS_IMPRECISE : /^TypeError: .*\(line 6, column \d+\)$/,
    ],
    [
      "R-SB-2: a runtime error in TypeScript keeps its line after stripped types",
      "interface A { x: number }\ntype B = A[];\nconst list: B = [];\nconst first = list[0] as A;\nfirst.x.toFixed();",
      "PROGRAM_ERROR",
      onQuickJs ? QUICKJS_IMPRECISE : /\(line 5, column \d+\)$/,
    ],
  ];
  for (const [name, program, code, message] of positioned) {
    it(name, async () => {
      expect(expectFailed(await run(program), code)).toMatch(message);
    });
  }

  it("R-SB-2: a fence inside a template literal belongs to the program", async () => {
    const code =
      "async () => {\n  const body = `Repro:\n~~~js\nbroken()\n~~~\n`;\n  const issue = await github.create_issue({ body });\n  return issue.args.body.length;\n}";
    expect(expectReturned(await run(code))).toBe("Repro:\n~~~js\nbroken()\n~~~\n".length);
  });
});
