import type { Connector } from "../connectors/define-connector.js";

export interface ModelDescriptionOptions {
  /** Extra text per connector name, appended to its line (adapters' per-connector hints). */
  hints?: Readonly<Record<string, string>>;
  /** Whether the sandbox has a host-run `fetch` (allowNetwork). */
  allowNetwork?: boolean;
}

/**
 * The text that tells a model how to use the Code Mode tool (R-AI-2): the connectors with their
 * instructions, search → describe → call, `codemode.step`, pauses, the sequential-call rule and
 * `codemode.run`. Shared by every framework adapter; kept short on purpose (a test bounds it).
 *
 * @example
 * tool({ description: modelDescription([github, payments]), ... })
 */
export function modelDescription(connectors: Iterable<Connector>, options: ModelDescriptionOptions = {}): string {
  const lines: string[] = [];
  for (const connector of connectors) {
    const methods = Object.keys(connector.tools);
    const shown = methods.slice(0, 12).join(", ") + (methods.length > 12 ? `, … (${methods.length - 12} more)` : "");
    const about = [connector.instructions, options.hints?.[connector.name]].filter(Boolean).join(" ");
    lines.push(`- ${connector.name}: ${about ? `${about} ` : ""}Methods: ${shown}.`);
  }
  return [
    "Run a JavaScript or TypeScript program that calls tools. Write one async arrow function, e.g. `async () => { const x = await github.list_issues({ repo: \"a/b\" }); return x.length; }`; its return value is the result.",
    "Connectors (globals; each method takes one object argument and returns a promise):",
    ...(lines.length > 0 ? lines : ["- (none configured)"]),
    "Find and check before calling: `await codemode.search(\"what you need\")` ranks methods and saved snippets; `await codemode.describe(\"github.create_issue\")` returns its TypeScript signature.",
    "Calls are logged and the program may be re-run from the top after an approval; recorded calls return their recorded results. So: issue connector calls one at a time with `await` when a call may need approval, and wrap anything that changes between runs (time, randomness" +
      (options.allowNetwork ? ", fetch" : "") +
      ") in `await codemode.step(\"name\", () => value)`.",
    "If the result says the execution is paused, a human must approve an action: tell the user what is waiting and do not re-issue the code; the run continues by itself after approval.",
    `\`await codemode.run("snippet-name", input)\` runs a saved snippet inside this program. console.log output is returned with the result. No require, import, process or network${options.allowNetwork ? " except fetch" : ""}.`,
  ].join("\n");
}
