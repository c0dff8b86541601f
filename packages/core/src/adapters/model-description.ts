import type { Connector } from "../connectors/define-connector.js";

export interface ModelDescriptionOptions {
  /** Extra text per connector name, appended to its line (adapters' per-connector hints). */
  hints?: Readonly<Record<string, string>>;
  /** Whether the sandbox has a host-run `fetch` (allowNetwork). */
  allowNetwork?: boolean;
}

/** Methods listed per connector; the rest are counted, and `codemode.search` finds them. */
const METHODS_SHOWN = 12;
/**
 * Characters of a connector's instructions and hint in the description. An MCP server's
 * instructions reach here too, and a server is not trusted to keep them short or on one line.
 */
export const MAX_ABOUT_CHARS = 400;

/**
 * The text that tells a model how to use the Code Mode tool (R-AI-2): the connectors with their
 * instructions, search → describe → call, `codemode.step`, pauses, the sequential-call rule and
 * `codemode.run`. Shared by every framework adapter. It is sent with every model call, so it stays
 * short (under 800 characters for one connector; a test bounds it), and its examples name a
 * method the configured connectors really have: a model copies examples, and an example method
 * that does not exist is a call that fails.
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
    `\`codemode.search("what you need")\` finds methods and snippets; \`codemode.describe("${example ?? "connector.method"}")\` gives a signature.`,
    `Call connectors one at a time with await. After an approval the program re-runs with recorded results: wrap ${changing} in \`codemode.step("name", () => value)\`.`,
    "A paused result means a human must approve: tell the user what waits; do not re-issue the code.",
    `console.log output is returned; \`codemode.run("name", input)\` runs a saved snippet. No require, import, process or network${options.allowNetwork ? " except fetch" : ""}.`,
  ].join("\n");
}

function connectorLine(connector: Connector, hint: string | undefined): string {
  const methods = Object.keys(connector.tools);
  const shown =
    methods.slice(0, METHODS_SHOWN).join(", ") +
    (methods.length > METHODS_SHOWN ? `, … (${methods.length - METHODS_SHOWN} more)` : "");
  const about = oneLine([connector.instructions, hint].filter(Boolean).join(" "), MAX_ABOUT_CHARS);
  return `- ${connector.name}: ${about ? `${about} ` : ""}Methods: ${shown}.`;
}

/** Text on one line (no line of its own can pose as a connector or a rule), cut to `max` characters. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
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
