import type { Node, Options, Program } from "acorn";
import { LinearParser } from "./linear-acorn.js";
import { describeStripError, type StripFailure, stripTypeScript } from "./type-stripper.js";

/**
 * Code a model wrote, turned into the body of one async function the sandbox can run.
 *
 * Accepted forms (R-SB-2): an async arrow function (or any function expression), a body of
 * statements whose last expression is the result, code inside a Markdown fence, and
 * `export default` of a function or value. TypeScript is accepted: types are stripped with
 * amaro (see docs/decisions.md), which keeps every line and column where it was, so error
 * positions still point into what the model wrote.
 */
export type NormalizedCode =
  | {
      ok: true;
      /**
       * Statements for the body of `async (input) => { … }`; the value it returns is the result.
       * A program's `input` is undefined; `codemode.run(name, input)` passes a snippet its input.
       */
      body: string;
      /** Add to a line number inside `body` to get the line in the code as written. */
      lineOffset: number;
      language: "javascript" | "typescript";
    }
  | { ok: false; message: string; line: number; column: number };

// Linear on any input: no two adjacent parts can match the same characters (this runs on the
// host thread, outside any timeout, on up to a million characters of model code).
const FENCE = /^[ \t]*(`{3,}|~{3,})[^\n`~]*\n/m;

/** Turns code as the model wrote it into a function body, or a syntax error with its position. */
export function normalizeCode(code: string): NormalizedCode {
  const { text: extracted, lineOffset } = extractFence(code);
  // A hashbang line is only valid at the very start of a script, and the body is not at the start.
  const text = extracted.startsWith("#!") ? `//${extracted.slice(2)}` : extracted;
  const javascript = classify(text);
  if (javascript.ok) return { ok: true, body: javascript.body, lineOffset, language: "javascript" };

  const stripped = stripTypes(text);
  if (!stripped.ok) {
    if (stripped.invalid) {
      const located = (stripped.refused ? undefined : locateInsideArrow(text)) ?? stripped;
      return { ok: false, message: located.message, line: located.line + lineOffset, column: located.column };
    }
    return { ...javascript.error, line: javascript.error.line + lineOffset };
  }
  const typescript = classify(stripped.code);
  if (typescript.ok) {
    // Transform mode (enums, namespaces) may move lines; strip-only mode keeps them.
    return { ok: true, body: typescript.body, lineOffset, language: "typescript" };
  }
  return { ...typescript.error, line: typescript.error.line + lineOffset };
}

function extractFence(code: string): { text: string; lineOffset: number } {
  const open = FENCE.exec(code);
  if (!open) return { text: code, lineOffset: 0 };
  const fence = open[1]!;
  if (isInsideLiteralOrComment(code, open.index + open[0].indexOf(fence))) return { text: code, lineOffset: 0 };
  const contentStart = open.index + open[0].length;
  const closePattern = new RegExp(`^[ \\t]*${fence[0] === "`" ? "`" : "~"}{${fence.length},}[ \\t]*$`, "m");
  const rest = code.slice(contentStart);
  const close = closePattern.exec(rest);
  const text = close ? rest.slice(0, close.index) : rest;
  const lineOffset = countLines(code.slice(0, contentStart));
  return { text, lineOffset };
}

/**
 * True when `offset` lies inside a string, template or comment of `code` read as a program: a
 * program that builds Markdown (an issue body with a code block) is not a Markdown answer.
 */
function isInsideLiteralOrComment(code: string, offset: number): boolean {
  const inside = (start: number, end: number) => start < offset && offset < end;
  let found = false;
  const options = {
    onToken: (token: { type: { label: string }; start: number; end: number }) => {
      if ((token.type.label === "template" || token.type.label === "string") && inside(token.start - 1, token.end)) found = true;
    },
    onComment: (_block: boolean, _text: string, start: number, end: number) => {
      if (inside(start, end)) found = true;
    },
  };
  for (const source of [code, stripTypesKeepingPositions(code)]) {
    if (source === undefined) continue;
    for (const sourceType of ["script", "module"] as const) {
      found = false;
      try {
        parse(source, { ecmaVersion: "latest", sourceType, allowAwaitOutsideFunction: true, allowReturnOutsideFunction: true, allowHashBang: true, ...options } as Options);
        return found;
      } catch {
        // Not a program in this grammar: try the next.
      }
    }
  }
  return false;
}

/** TypeScript with its types blanked out, or undefined when it is not TypeScript either. */
function stripTypesKeepingPositions(code: string): string | undefined {
  try {
    return stripTypeScript(code, "strip-only");
  } catch {
    return undefined;
  }
}

function countLines(text: string): number {
  let lines = 0;
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) === 10) lines++;
  return lines;
}

type SyntaxFailure = { ok: false; message: string; line: number; column: number };

function classify(text: string): { ok: true; body: string } | { ok: false; error: SyntaxFailure } {
  let program: Program;
  try {
    program = parseProgram(text, "script");
  } catch (scriptError) {
    try {
      // `export default` needs module grammar.
      program = parseProgram(text, "module");
    } catch {
      return { ok: false, error: toSyntaxFailure(scriptError) };
    }
  }
  try {
    const body = toBody(text, program);
    checkBodyStaysInside(body);
    return { ok: true, body };
  } catch (error) {
    return { ok: false, error: toSyntaxFailure(error) };
  }
}

/**
 * The executor runs the body inside `async () => {…}` of a script. Code accepted only in module
 * grammar reads differently there (`<!--` opens a comment in a script): it must not be able to
 * close that function early and run, or return, anything around it.
 */
function checkBodyStaysInside(body: string): void {
  const wrapped = `(async (input) => {\n${body}\n})`;
  let program: Program;
  try {
    program = parse(wrapped, { ecmaVersion: "latest", sourceType: "script", locations: true });
  } catch (error) {
    const loc = (error as { loc?: { line: number; column: number } }).loc;
    const message = (error instanceof Error ? error.message : String(error)).replace(/ \(\d+:\d+\)$/, "");
    throw new CodeFormError(message, { line: Math.max(1, (loc?.line ?? 2) - 1), column: loc?.column ?? 0 });
  }
  const only = program.body.length === 1 ? program.body[0] : undefined;
  const arrow = only?.type === "ExpressionStatement" ? only.expression : undefined;
  if (arrow?.type !== "ArrowFunctionExpression" || arrow.end !== wrapped.length - 1) {
    const end = arrow?.loc?.end ?? only?.loc?.end;
    throw new CodeFormError("the code closes the function it runs in (it only parses as a module)", {
      line: Math.max(1, (end?.line ?? 2) - 1),
      column: end?.column ?? 0,
    });
  }
}

/** acorn's `parse`, with name bookkeeping that stays linear on hostile code (see linear-acorn.ts). */
function parse(input: string, options: Options): Program {
  return LinearParser.parse(input, options);
}

function parseProgram(text: string, sourceType: "script" | "module"): Program {
  return parse(text, {
    ecmaVersion: "latest",
    sourceType,
    allowAwaitOutsideFunction: true,
    allowReturnOutsideFunction: true,
    allowHashBang: true,
    locations: true,
  });
}

class CodeFormError extends Error {
  constructor(
    message: string,
    readonly loc: { line: number; column: number },
  ) {
    super(message);
  }
}

function toSyntaxFailure(error: unknown): SyntaxFailure {
  const loc = (error as { loc?: { line: number; column: number } }).loc;
  const raw = error instanceof Error ? error.message : String(error);
  // acorn appends " (line:column)"; the position is reported in its own fields.
  const message = raw.replace(/ \(\d+:\d+\)$/, "");
  return { ok: false, message, line: loc?.line ?? 1, column: (loc?.column ?? 0) + 1 };
}

/** acorn's position (column counted from 0, as toSyntaxFailure expects). */
function position(node: Node): { line: number; column: number } {
  return { line: node.loc?.start.line ?? 1, column: node.loc?.start.column ?? 0 };
}

/** Rewrites the program so that it is the body of an async function returning the result. */
function toBody(text: string, program: Program): string {
  const statements = program.body.filter((statement) => statement.type !== "EmptyStatement");
  for (const statement of statements) {
    if (statement.type === "ImportDeclaration") {
      throw new CodeFormError("import declarations are not available in the sandbox: connectors are globals (for example github.list_issues)", position(statement));
    }
    if (statement.type === "ExportNamedDeclaration" || statement.type === "ExportAllDeclaration") {
      throw new CodeFormError("only `export default` is accepted: export the function to run", position(statement));
    }
  }

  const exported = statements.find((statement) => statement.type === "ExportDefaultDeclaration");
  if (exported && exported.type === "ExportDefaultDeclaration") {
    const declaration = exported.declaration;
    const head = "const __codemode_default = ";
    const keywordSpan = declaration.start - exported.start;
    // Keep columns where the model wrote them when the replacement fits.
    const replacement = head.length <= keywordSpan ? head.padEnd(keywordSpan, " ") : head;
    const rewritten = text.slice(0, exported.start) + replacement + text.slice(declaration.start);
    const isFunction = declaration.type === "FunctionDeclaration" || declaration.type === "ArrowFunctionExpression" || declaration.type === "FunctionExpression";
    return `${rewritten}\n;return ${isFunction ? "__codemode_default(input)" : "__codemode_default"};`;
  }

  const only = statements.length === 1 ? statements[0]! : undefined;
  if (only?.type === "ExpressionStatement" && isFunctionExpression(only.expression)) {
    // An (async) arrow or function expression: call it. `return (` stays on the first line so
    // no line moves and ASI cannot end the return early.
    return `return (${text.slice(0, only.expression.end)}\n)(input)${text.slice(only.expression.end)};`;
  }
  if (only?.type === "FunctionDeclaration" && only.id) {
    return `${text}\n;return ${only.id.name}(input);`;
  }

  const last = statements.at(-1);
  // A trailing string statement is the result even when it reads as a directive, as with eval.
  if (last?.type === "ExpressionStatement") {
    const expressionEnd = last.expression.end;
    // Helpers first, then the async arrow to run: a function is never a result, so call it.
    const call = isFunctionExpression(last.expression) ? "(input)" : "";
    return `${text.slice(0, last.start)}return (${text.slice(last.start, expressionEnd)}\n)${call};${text.slice(expressionEnd)}`;
  }
  return text;
}

function isFunctionExpression(node: Node): boolean {
  return node.type === "ArrowFunctionExpression" || node.type === "FunctionExpression";
}

type StripResult = { ok: true; code: string } | StripFailure;

function stripTypes(text: string): StripResult {
  try {
    return { ok: true, code: stripTypeScript(text, "strip-only") };
  } catch (stripError) {
    const failure = describeStripError(stripError);
    if (failure.invalid) return failure;
    try {
      // Enums, namespaces and parameter properties need a real transform.
      return { ok: true, code: stripTypeScript(text, "transform") };
    } catch (transformError) {
      return describeStripError(transformError);
    }
  }
}

/** `async () => {` (one line, parameters without parentheses inside) at the start of the code. */
// Bounded repetitions where parts overlap, so a hostile line cannot make it backtrack for long.
const ARROW_HEAD = /^(\s*)(async[ \t]+)?\(([^()\n]*)\)([ \t]{0,40}:[^{\n]{0,400}?)?[ \t]{0,40}=>[ \t]{0,40}(?=\{)/;

/**
 * SWC gives up on an arrow function with an error in its body as a whole and reports the error
 * at the arrow's end. Ask again with a function head instead of the arrow head (same lines) to
 * get where the error is; undefined when that does not apply.
 */
function locateInsideArrow(text: string): { message: string; line: number; column: number } | undefined {
  const head = ARROW_HEAD.exec(text);
  if (!head) return undefined;
  const [whole, leading = "", asyncKeyword = "", parameters = "", returnType = ""] = head;
  const replacement = `${leading}${asyncKeyword}function __codemode_main(${parameters})${returnType} `;
  const rewritten = replacement + text.slice(whole.length);
  const failure = stripTypes(rewritten);
  if (failure.ok || !failure.invalid) return undefined;
  // Only the head's own line changed length: move columns after the head back.
  const headLine = countLines(leading) + 1;
  const shift = replacement.length - whole.length;
  const bodyColumnInRewritten = replacement.length - (leading.lastIndexOf("\n") + 1) + 1;
  const column = failure.line === headLine && failure.column >= bodyColumnInRewritten ? failure.column - shift : failure.column;
  return { message: failure.message, line: failure.line, column };
}
