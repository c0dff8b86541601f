import type { Connector } from "../connectors/define-connector.js";

export interface ModelDescriptionOptions {
  /** Extra text per connector name, appended to its line (adapters' per-connector hints). */
  hints?: Readonly<Record<string, string>>;
  /** Whether the sandbox has a host-run `fetch` (allowNetwork). */
  allowNetwork?: boolean;
}

/**
 * Characters of a connector's own instructions on its line: the line says what the connector is
 * about, `codemode.describe("<connector>")` gives the whole text. An MCP server's instructions
 * reach here too, and a server is not trusted to keep them short or on one line.
 */
const ABOUT_CHARS = 24;
/**
 * Characters of a connector's line for the start of its instructions and its first method names
 * together; the other methods are counted, and `describe` lists them all.
 */
const LINE_CHARS = 44;
/** Characters of an adapter's hint for a connector: the application's own words, kept nearly whole. */
export const MAX_ABOUT_CHARS = 400;

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
    `Call connectors one at a time with await. After an approval the program re-runs with recorded results: wrap ${changing} in \`codemode.step("name", () => value)\`.`,
    "A paused result means a human must approve: tell the user what waits; do not re-issue the code.",
    `console.log output is returned; \`codemode.run("name", input)\` runs a saved snippet. No require, import, process or network${options.allowNetwork ? " except fetch" : ""}.`,
  ].join("\n");
}

function connectorLine(connector: Connector, hint: string | undefined): string {
  const methods = Object.keys(connector.tools);
  const about = connector.instructions ? clip(plain(connector.instructions), ABOUT_CHARS) : "";
  let room = LINE_CHARS - about.length;
  const shown: string[] = [];
  for (const method of methods) {
    if (method.length + 2 > room) break;
    shown.push(method);
    room -= method.length + 2;
  }
  const more = methods.length - shown.length;
  const names = methods.length === 0 ? "no methods" : shown.join(", ");
  const rest = more === 0 ? "" : shown.length === 0 ? `${more} method${more === 1 ? "" : "s"}` : `, +${more} more`;
  const hinted = hint ? ` ${clip(hint.replace(/\s+/g, " ").trim(), MAX_ABOUT_CHARS)}` : "";
  return `- ${connector.name}${about ? ` (${about})` : ""}: ${names}${rest}.${hinted}`;
}

/** Text on one line without Markdown marks: no line of its own can pose as a connector or a rule. */
function plain(text: string): string {
  return text
    .replace(/[#*`>]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** Cut to `max` characters at a word where one is near, marked with an ellipsis. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never half of a surrogate pair: an emoji at the cut goes whole.
  const cut = text.slice(0, /[\uD800-\uDBFF]/.test(text[max - 2] ?? "") ? max - 2 : max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:–-]+$/, "")}…`;
}

function connectorOf(path: string | undefined): string | undefined {
  return path?.slice(0, path.indexOf("."));
}

/** A method to show in examples: the first that never asks for approval (a read), else the first. */
function exampleMethod(connectors: Connector[]): string | undefined {
  let first: string | undefined;
  for (const connector of connectors) {
    for (const [method, tool] of Object.entries(connector.tools)) {
      const path = `${connector.name}.${method}`;
      if (!tool.requiresApproval) return path;
      first ??= path;
    }
  }
  return first;
}
