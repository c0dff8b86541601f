import type { Connector } from "../connectors/define-connector.js";

export interface ModelDescriptionOptions {
  /** Extra text per connector name, appended to its line (adapters' per-connector hints). */
  hints?: Readonly<Record<string, string>>;
  /** Whether the sandbox has a host-run `fetch` (allowNetwork). */
  allowNetwork?: boolean;
}

/**
 * Width (see `width`) of a connector's own instructions on its line: 24 ASCII characters, one
 * character of a rare script. The line says what the connector is about,
 * `codemode.describe("<connector>")` gives the whole text. An MCP server's instructions reach
 * here too, and a server is not trusted to keep them short, on one line, or in cheap characters.
 */
const ABOUT_WIDTH = 24;
/**
 * Width of a connector's line for the start of its instructions and its first method names
 * together; the other methods are counted, and `describe` lists them all.
 */
const LINE_WIDTH = 44;
/**
 * Characters of a connector's name on its line. A name is an identifier of any length; a longer
 * one is cut and marked, so it cannot fill the description (search gives it whole), and no example
 * names it, since a cut name cannot be called. Past its first `NAME_FREE` characters, a name takes
 * its room from the method names, so a long name does not lengthen the line either.
 */
const NAME_CHARS = 24;
const NAME_FREE = 12;
/**
 * An adapter's hint for a connector is the application's own words, kept nearly whole: 400
 * characters, and at most 1,600 of width (about 400 tokens in any script).
 */
const HINT_CHARS = 400;
const HINT_WIDTH = 1_600;

/**
 * The text that tells a model how to use the Code Mode tool (R-AI-2): the connectors with their
 * instructions, search → describe → call, `codemode.step`, pauses, the sequential-call rule and
 * `codemode.run`. Shared by every framework adapter. It is sent with every model call, so it stays
 * short: about 200 tokens for one connector, and each connector adds one bounded line (its name,
 * the start of its instructions, the first method names and a count), never a line per method,
 * so a thousand tools cost what their connectors cost (test/description-tokens.test.ts pins the
 * figures). The rest is a `codemode.describe` away. Its examples name a method the configured
 * connectors really have: a model copies examples, and an example method that does not exist is
 * a call that fails.
 *
 * @example
 * tool({ description: modelDescription([github, payments]), ... })
 */
export function modelDescription(connectors: Iterable<Connector>, options: ModelDescriptionOptions = {}): string {
  const list = [...connectors];
  const example = exampleMethod(list);
  const call = example
    ? `const x = await ${example}({ … }); return x;`
    : 'return await codemode.search("what you need");';
  const changing = options.allowNetwork ? "time, randomness and fetch" : "time and randomness";
  return [
    `Runs a JavaScript async arrow function and returns its result: \`async () => { ${call} }\`.`,
    "Connectors (globals; each method takes one object):",
    ...(list.length > 0
      ? list.map((connector) => connectorLine(connector, options.hints?.[connector.name]))
      : ["- (none configured)"]),
    `\`codemode.describe("${connectorOf(example) ?? "connector"}")\` gives its notes and signatures (or "${example ?? "connector.method"}" for one); \`codemode.search("what you need")\` finds methods and snippets.`,
    `Await each call; with Promise.allSettled, a denial rejects only its own call. After an approval the program re-runs with recorded results: wrap ${changing} in \`codemode.step("name", () => value)\`.`,
    "A paused result means a human must approve: tell the user what waits; do not re-issue the code.",
    `console.log output is returned; \`codemode.run("name", input)\` runs a saved snippet. No require, import, process or network${options.allowNetwork ? " except fetch" : ""}.`,
  ].join("\n");
}

function connectorLine(connector: Connector, hint: string | undefined): string {
  const methods = Object.keys(connector.tools);
  const name = clip(plain(connector.name), NAME_CHARS);
  const about = connector.instructions ? clip(plain(connector.instructions), ABOUT_WIDTH) : "";
  let room = LINE_WIDTH - width(about) - Math.max(0, width(name) - NAME_FREE);
  const shown: string[] = [];
  for (const method of methods) {
    if (method.length + 2 > room) break;
    shown.push(method);
    room -= method.length + 2;
  }
  const more = methods.length - shown.length;
  const names = methods.length === 0 ? "no methods" : shown.join(", ");
  const rest = more === 0 ? "" : shown.length === 0 ? `${more} method${more === 1 ? "" : "s"}` : `, +${more} more`;
  const hinted = hint ? ` ${clip(plain(hint), HINT_WIDTH, HINT_CHARS)}` : "";
  return `- ${name}${about ? ` (${about})` : ""}: ${names}${rest}.${hinted}`;
}

/**
 * Text on one line with nothing that could pose as a connector's line, a list entry or a rule:
 * every kind of line break (NEL, U+2028, U+2029, control characters) becomes a space; Markdown
 * marks, parentheses, brackets, pipes and dashes that are not inside a word go, and so do
 * invisible format characters (bidi overrides, zero-width ones). An ellipsis becomes "...": "…"
 * marks only a cut.
 */
function plain(text: string): string {
  return text
    .replace(/\p{Cf}/gu, "")
    .replace(/…/g, "...")
    .replace(/[*`~]+/g, "")
    .replace(/[#>|()[\]]+/g, " ")
    .replace(/(?<![\p{L}\p{N}])\p{Pd}+|\p{Pd}+(?![\p{L}\p{N}])/gu, " ")
    .replace(/[\s\p{Cc}\p{Zl}\p{Zp}]+/gu, " ")
    .trim();
}

/**
 * How much room text takes on a line, in about quarters of a token: an ASCII character (and the
 * ellipsis that marks a cut) counts one, any other character four per UTF-8 byte. Words in ASCII
 * take about four characters a token, but a rare script can take a token a byte, so a count of
 * characters alone would not bound the tokens.
 */
function width(text: string): number {
  let total = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    total += code < 0x80 || char === "…" ? 1 : 4 * (code < 0x800 ? 2 : code < 0x10000 ? 3 : 4);
  }
  return total;
}

/**
 * Cut to `maxWidth` of width and `maxLength` UTF-16 units, at a word where one is near, marked
 * with an ellipsis.
 */
function clip(text: string, maxWidth: number, maxLength = maxWidth): string {
  if (width(text) <= maxWidth && text.length <= maxLength) return text;
  let cut = "";
  let used = 1;
  // Whole code points: never half of a surrogate pair, so an emoji at the cut goes whole.
  for (const char of text) {
    used += width(char);
    if (used > maxWidth || cut.length + char.length > maxLength - 1) break;
    cut += char;
  }
  const space = cut.lastIndexOf(" ");
  return `${(space > Math.min(maxWidth, maxLength) / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:–-]+$/, "")}…`;
}

function connectorOf(path: string | undefined): string | undefined {
  return path?.slice(0, path.indexOf("."));
}

/**
 * A method to show in examples: the first that never asks for approval (a read), else the first;
 * never one whose connector or method name is too long to show whole (a cut name cannot be called).
 */
function exampleMethod(connectors: Connector[]): string | undefined {
  let first: string | undefined;
  for (const connector of connectors) {
    if (connector.name.length > NAME_CHARS) continue;
    for (const [method, tool] of Object.entries(connector.tools)) {
      if (method.length > NAME_CHARS) continue;
      const path = `${connector.name}.${method}`;
      if (!tool.requiresApproval) return path;
      first ??= path;
    }
  }
  return first;
}
