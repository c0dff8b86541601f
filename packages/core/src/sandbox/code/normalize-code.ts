import type { Node, Options, Program } from "acorn";
import { errorMessage } from "../../error-message.js";
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

/**
 * Turns code as the model wrote it into a function body, or a syntax error with its position.
 * Each text is read at most once per grammar (JavaScript script, JavaScript module, TypeScript
 * stripped, TypeScript transformed): every step asks one `ProgramReader`, which keeps what it
 * read. A hostile program (a fence line in a comment, a trailing type annotation) cannot make the
 * host read it over and over.
 */
export function normalizeCode(code: string): NormalizedCode {
  const reader = new ProgramReader();
  const { text: extracted, lineOffset } = extractFence(code, reader);
  // A hashbang line is only valid at the very start of a script, and the body is not at the start.
  const text = extracted.startsWith("#!") ? `//${extracted.slice(2)}` : extracted;
  const javascript = classify(text, reader);
  if (javascript.ok) return { ok: true, body: javascript.body, lineOffset, language: "javascript" };

  const stripped = reader.stripTypes(text);
  if (!stripped.ok) {
    if (stripped.invalid) {
      const located = (stripped.refused ? undefined : locateInsideArrow(text, reader)) ?? stripped;
      return { ok: false, message: located.message, line: located.line + lineOffset, column: located.column };
    }
    return { ...javascript.error, line: javascript.error.line + lineOffset };
  }
  const typescript = classify(stripped.code, reader);
  if (typescript.ok) {
    // Transform mode (enums, namespaces) may move lines; strip-only mode keeps them.
    return { ok: true, body: typescript.body, lineOffset, language: "typescript" };
  }
  return { ...typescript.error, line: typescript.error.line + lineOffset };
}

/** A program as one grammar read it: its tree, and where its strings, templates and comments are. */
interface Reading {
  program: Program;
  /** Pairs of [start, end) offsets of every string, template chunk and comment, in source order. */
  literals: number[];
}

type StripOutcome = { code: string } | { error: unknown };

/**
 * Reads texts, each at most once per grammar, and remembers the outcome (the tree, or the error)
 * for the rest of one `normalizeCode` call.
 */
class ProgramReader {
  private readonly readings = new Map<string, Map<"script" | "module", Reading | { error: unknown }>>();
  private readonly stripped = new Map<string, { stripOnly?: StripOutcome; result?: StripResult }>();

  /** The text read in `sourceType` grammar; throws acorn's error (the same one every time) when it is not. */
  read(text: string, sourceType: "script" | "module"): Reading {
    let byGrammar = this.readings.get(text);
    if (!byGrammar) {
      byGrammar = new Map();
      this.readings.set(text, byGrammar);
    }
    let reading = byGrammar.get(sourceType);
    if (!reading) {
      const literals: number[] = [];
      try {
        const program = parse(text, {
          ecmaVersion: "latest",
          sourceType,
          allowAwaitOutsideFunction: true,
          allowReturnOutsideFunction: true,
          allowHashBang: true,
          locations: true,
          onToken: (token) => {
            if (token.type.label === "template" || token.type.label === "string")
              literals.push(token.start - 1, token.end);
          },
          onComment: (_block, _text, start, end) => void literals.push(start, end),
        });
        reading = { program, literals };
      } catch (error) {
        reading = { error };
      }
      byGrammar.set(sourceType, reading);
    }
    if ("error" in reading) throw reading.error;
    return reading;
  }

  /** TypeScript with its types blanked out (strip-only: lines and columns kept); throws SWC's error. */
  stripOnly(text: string): string {
    const entry = this.strippedEntry(text);
    if (!entry.stripOnly) {
      try {
        entry.stripOnly = { code: stripTypeScript(text, "strip-only") };
      } catch (error) {
        entry.stripOnly = { error };
      }
    }
    if ("error" in entry.stripOnly) throw entry.stripOnly.error;
    return entry.stripOnly.code;
  }

  /** Types stripped, or transformed where strip-only cannot (enums, namespaces); each mode run once per text. */
  stripTypes(text: string): StripResult {
    const entry = this.strippedEntry(text);
    if (entry.result) return entry.result;
    let result: StripResult;
    try {
      result = { ok: true, code: this.stripOnly(text) };
    } catch (stripError) {
      const failure = describeStripError(stripError);
      if (failure.invalid) result = failure;
      else {
        try {
          // Enums, namespaces and parameter properties need a real transform.
          result = { ok: true, code: stripTypeScript(text, "transform") };
        } catch (transformError) {
          result = describeStripError(transformError);
        }
      }
    }
    entry.result = result;
    return result;
  }

  private strippedEntry(text: string): { stripOnly?: StripOutcome; result?: StripResult } {
    let entry = this.stripped.get(text);
    if (!entry) {
      entry = {};
      this.stripped.set(text, entry);
    }
    return entry;
  }
}

function extractFence(code: string, reader: ProgramReader): { text: string; lineOffset: number } {
  const open = FENCE.exec(code);
  if (!open) return { text: code, lineOffset: 0 };
  const fence = open[1]!;
  if (isInsideLiteralOrComment(code, open.index + open[0].indexOf(fence), reader)) return { text: code, lineOffset: 0 };
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
 * program that builds Markdown (an issue body with a code block) is not a Markdown answer. The
 * readings are the ones `classify` uses next, so the code is not read again for it.
 */
function isInsideLiteralOrComment(code: string, offset: number, reader: ProgramReader): boolean {
  const sources: Array<() => string> = [() => code, () => reader.stripOnly(code)];
  for (const source of sources) {
    let text: string;
    try {
      text = source();
    } catch {
      // Not TypeScript either.
      continue;
    }
    for (const sourceType of ["script", "module"] as const) {
      let literals: number[];
      try {
        literals = reader.read(text, sourceType).literals;
      } catch {
        // Not a program in this grammar: try the next.
        continue;
      }
      for (let index = 0; index < literals.length; index += 2)
        if (literals[index]! < offset && offset < literals[index + 1]!) return true;
      return false;
    }
  }
  return false;
}

function countLines(text: string): number {
  let lines = 0;
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) === 10) lines++;
  return lines;
}

type SyntaxFailure = { ok: false; message: string; line: number; column: number };

function classify(
  text: string,
  reader: ProgramReader,
): { ok: true; body: string } | { ok: false; error: SyntaxFailure } {
  let program: Program;
  let grammar: "script" | "module" = "script";
  try {
    program = reader.read(text, "script").program;
  } catch (scriptError) {
    try {
      // `export default` needs module grammar.
      program = reader.read(text, "module").program;
      grammar = "module";
    } catch {
      return { ok: false, error: toSyntaxFailure(scriptError) };
    }
  }
  try {
    const body = toBody(text, program);
    // A script stays a script inside the function; what only module grammar accepts is checked.
    if (grammar === "module") checkBodyStaysInside(body);
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
    const message = errorMessage(error).replace(/ \(\d+:\d+\)$/, "");
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
  const raw = errorMessage(error);
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
      throw new CodeFormError(
        "import declarations are not available in the sandbox: connectors are globals (for example github.list_issues)",
        position(statement),
      );
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
    const isFunction =
      declaration.type === "FunctionDeclaration" ||
      declaration.type === "ArrowFunctionExpression" ||
      declaration.type === "FunctionExpression";
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

/** `async () => {` (one line, parameters without parentheses inside) at the start of the code. */
// Bounded repetitions where parts overlap, so a hostile line cannot make it backtrack for long.
const ARROW_HEAD = /^(\s*)(async[ \t]+)?\(([^()\n]*)\)([ \t]{0,40}:[^{\n]{0,400}?)?[ \t]{0,40}=>[ \t]{0,40}(?=\{)/;

/**
 * SWC gives up on an arrow function with an error in its body as a whole and reports the error
 * at the arrow's end. Ask again with a function head instead of the arrow head (same lines) to
 * get where the error is; undefined when that does not apply.
 */
function locateInsideArrow(
  text: string,
  reader: ProgramReader,
): { message: string; line: number; column: number } | undefined {
  const head = ARROW_HEAD.exec(text);
  if (!head) return undefined;
  const [whole, leading = "", asyncKeyword = "", parameters = "", returnType = ""] = head;
  const replacement = `${leading}${asyncKeyword}function __codemode_main(${parameters})${returnType} `;
  const rewritten = replacement + text.slice(whole.length);
  const failure = reader.stripTypes(rewritten);
  if (failure.ok || !failure.invalid) return undefined;
  // Only the head's own line changed length: move columns after the head back.
  const headLine = countLines(leading) + 1;
  const shift = replacement.length - whole.length;
  const bodyColumnInRewritten = replacement.length - (leading.lastIndexOf("\n") + 1) + 1;
  const column =
    failure.line === headLine && failure.column >= bodyColumnInRewritten ? failure.column - shift : failure.column;
  return { message: failure.message, line: failure.line, column };
}
