import { createRequire } from "node:module";
import { errorMessage } from "../../error-message.js";

/**
 * amaro (SWC's type stripper, compiled to WebAssembly) behind a guard, because the code it reads
 * is hostile. SWC parses recursively: deep nesting overflows its stack, and a crash inside the
 * WebAssembly instance can leave its memory corrupted, so that every later call of the process
 * fails ("memory access out of bounds") — one program could break TypeScript for all the others,
 * including already-approved runs. So:
 *
 * - code nested deeper than `MAX_NESTING` brackets is refused before amaro sees it;
 * - any failure that is not one of SWC's own coded errors (a stack overflow, a WebAssembly trap)
 *   is reported as a syntax error of that code, and amaro is loaded afresh (a new WebAssembly
 *   instance, about 40 ms): no crash outlives the call that caused it.
 */

/** Deepest bracket nesting (`(`, `[`, `{`, wherever they are, strings included) handed to amaro. */
export const MAX_NESTING = 256;

/**
 * How stripping failed: a syntax error of the code (`invalid`), or a construct strip-only mode
 * cannot do. `refused`: the code was too deep for the stripper; asking again differently is no use.
 */
export type StripFailure = {
  ok: false;
  invalid: boolean;
  refused?: true;
  message: string;
  line: number;
  column: number;
};

type Transform = (code: string, options: { mode: "strip-only" | "transform"; sourceMap?: boolean }) => { code: string };

const load = createRequire(import.meta.url);
let transform: Transform | undefined;

function amaro(): Transform {
  transform ??= (load("amaro") as { transformSync: Transform }).transformSync;
  return transform;
}

/** Forgets the loaded instance: the next call evaluates amaro again, with a new WebAssembly instance. */
function reloadAmaro(): void {
  const amaroPath = load.resolve("amaro");
  const folder = amaroPath.slice(0, amaroPath.lastIndexOf("/") + 1);
  for (const key of Object.keys(load.cache)) if (key.startsWith(folder)) delete load.cache[key];
  transform = undefined;
}

/**
 * Strips types (`mode: "strip-only"`, which keeps every line and column) or transforms them
 * (enums, namespaces). Throws a `StripFailure`-shaped error, never leaves amaro broken.
 */
export function stripTypeScript(code: string, mode: "strip-only" | "transform"): string {
  const deep = nestingBeyond(code, MAX_NESTING);
  if (deep) {
    throw {
      code: "InvalidSyntax",
      refused: true,
      message: `the code nests brackets more than ${MAX_NESTING} levels deep`,
      startLine: deep.line,
      startColumn: deep.column,
    };
  }
  try {
    return amaro()(code, mode === "transform" ? { mode, sourceMap: false } : { mode }).code;
  } catch (error) {
    if (typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string")
      throw error;
    reloadAmaro();
    const reason = errorMessage(error);
    throw {
      code: "InvalidSyntax",
      refused: true,
      message: `the TypeScript stripper could not read this code (${reason}): it is nested too deeply`,
      startLine: 1,
      startColumn: 0,
    };
  }
}

/** Turns what `stripTypeScript` threw into a failure with a position (column counted from 1). */
export function describeStripError(error: unknown): StripFailure {
  const details = error as {
    code?: unknown;
    refused?: unknown;
    message?: unknown;
    startLine?: unknown;
    startColumn?: unknown;
  };
  return {
    ok: false,
    invalid: details.code === "InvalidSyntax",
    ...(details.refused === true ? { refused: true as const } : {}),
    message: typeof details.message === "string" ? details.message : String(error),
    line: typeof details.startLine === "number" ? details.startLine : 1,
    column: typeof details.startColumn === "number" ? details.startColumn + 1 : 1,
  };
}

/** Where bracket nesting first exceeds `limit` (line from 1, column from 0), counting every bracket in the text. */
function nestingBeyond(code: string, limit: number): { line: number; column: number } | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < code.length; index++) {
    const char = code.charCodeAt(index);
    if (char === 40 || char === 91 || char === 123) {
      // ( [ {
      depth++;
      if (depth > limit) return { line, column: index - lineStart };
    } else if (char === 41 || char === 93 || char === 125) {
      // ) ] }
      if (depth > 0) depth--;
    } else if (char === 10) {
      line++;
      lineStart = index + 1;
    }
  }
  return undefined;
}
