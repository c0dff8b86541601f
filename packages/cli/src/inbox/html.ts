import { SHOWN_AS_CODE_POINTS } from "../output/terminal.js";

/** Markup that is already safe to send: built by `html`, never from raw input. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Characters that change how text around them is shown without being seen: bidi controls (which
 * can make "1000 to ACME" read as another account), zero-width characters, and C0/C1 controls
 * (but tab and newline). Shown as a visible code point instead: `⟦U+202E⟧`.
 */
export const INVISIBLE = new RegExp(`[${SHOWN_AS_CODE_POINTS}]`, "g");

export function escapeHtml(text: string): string {
  return text
    .replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character)
    .replace(INVISIBLE, (character) => `⟦U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟧`);
}

/**
 * A template tag that escapes every interpolated value unless it is `SafeHtml` (or an array of
 * it): the pages show arguments and results the model's code produced, which are hostile input.
 *
 * @example
 * html`<td>${entry.method}</td>` // escaped
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? "");
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === undefined || value === null || value === false) return "";
  return escapeHtml(String(value));
}
