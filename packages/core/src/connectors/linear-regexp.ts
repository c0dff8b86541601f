import { RE2JS } from "re2js";

/** What ajv needs of a regular expression: a test, and a text that tells one pattern from another. */
export interface LinearRegExp {
  test(input: string): boolean;
  toString(): string;
}

/**
 * The regular expressions of JSON Schemas (`pattern`, `patternProperties`), matched in time linear
 * in the input (RE2, through its JavaScript port re2js). A schema comes from an MCP server or an
 * application, and the string it is matched against comes from the model's program: with
 * JavaScript's backtracking engine, `^(a+)+$` against 30 characters held the host's event loop
 * for seconds, and each character more doubled it.
 *
 * A pattern RE2 cannot express (lookaround, backreferences) is not checked by the runtime: the
 * check answers true and the tool receives the value unchecked, as it would without a schema. A
 * tool must check its own input in any case (docs/security.md, "Argument checks").
 */
export function linearRegExp(pattern: string, _flags?: string): LinearRegExp {
  const text = `/${pattern}/`;
  let compiled: RE2JS | undefined;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch {
    compiled = undefined;
  }
  return {
    test: (input) => (compiled ? compiled.test(String(input)) : true),
    // ajv keeps one compiled pattern per distinct text: it must differ for every pattern.
    toString: () => text,
  };
}
// Read by ajv only when it writes standalone code, which the runtime never does.
linearRegExp.code = "linearRegExp";
