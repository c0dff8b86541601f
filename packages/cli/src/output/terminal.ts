import { randomBytes } from "node:crypto";
import { styleText } from "node:util";

type Style = Parameters<typeof styleText>[0];

/** A table cell: its text, and the style it is shown in when colours are on. */
export interface Cell {
  text: string;
  style?: Style;
}

const STATE_STYLES: Record<string, Style> = {
  // Execution statuses
  completed: "green",
  paused: "yellow",
  running: "cyan",
  error: "red",
  rejected: "red",
  rolled_back: "magenta",
  // Log entry states
  applied: "green",
  pending: "yellow",
  executing: "cyan",
  reverted: "magenta",
};

/**
 * Stands for ESC in the styles this program adds, until `line` writes them: every other ESC that
 * reaches `line` came from the store, and is shown as `\u{1b}`, not obeyed. Random per process, so
 * no stored text can spell it.
 */
const STYLE_MARK = `\ue000${randomBytes(8).toString("hex")}\ue001`;

/** `text` made visible, with this program's own style escapes put back. */
function withStyles(text: string): string {
  return text.split(STYLE_MARK).map(visible).join("\x1b");
}

/**
 * What the store holds is hostile input to the operator's terminal: an escape sequence in a
 * program's comment can move the cursor and redraw a pending wire's target, and a bidi control
 * can reverse what a reader sees. These characters are shown as their code points instead: C0
 * controls but newline and tab, DEL and C1, bidi controls, zero-width characters, line
 * separators and the byte-order mark. The inbox shows the same ones visibly (inbox/html.ts).
 */
export const SHOWN_AS_CODE_POINTS =
  "\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff";
// And the style mark's first character, so that no stored text can hold one.
const UNSAFE = new RegExp(`[${SHOWN_AS_CODE_POINTS}\\ue000]`, "g");
const UNSAFE_ON_ONE_LINE = new RegExp(`[${SHOWN_AS_CODE_POINTS}\\n\\t\\ue000]`, "g");
const shown = (character: string) => `\\u{${character.codePointAt(0)!.toString(16)}}`;

/** `text` with every character that could act on the terminal, or hide, shown as its code point. */
export function visible(text: string): string {
  return text.replace(UNSAFE, shown);
}

/** Like `visible`, and newlines too: for what must stay on one line (a cell, who decided, why). */
export function visibleOnOneLine(text: string): string {
  return text.replace(UNSAFE_ON_ONE_LINE, shown);
}

/**
 * A message of several lines on one line, whole: its lines trimmed and joined with "; " (with a
 * space after a line that ends in a colon), so the part of a validation error that names the bad
 * field is kept; then made visible on one line.
 */
export function wholeOnOneLine(text: string): string {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return visibleOnOneLine(
    lines
      .map((line, index) => (index === 0 ? line : `${lines[index - 1]!.endsWith(":") ? " " : "; "}${line}`))
      .join(""),
  );
}

/**
 * Where a command writes: stdout for results (a table, or one JSON document with `--json`),
 * stderr for progress and problems. Colours follow the terminal (off when piped, with NO_COLOR
 * or with `--no-color`).
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly color: boolean,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {}

  /** One line (or several, when `text` holds newlines) of the result; see `visible`. */
  line(text = ""): void {
    this.stdout.write(`${withStyles(text)}\n`);
  }

  /** The command's result as one JSON document. */
  document(value: unknown): void {
    // The same values, with those characters as `\uXXXX` escapes (JSON.stringify escapes C0 itself).
    const text = JSON.stringify(value, null, 2).replace(
      UNSAFE,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    this.stdout.write(`${text}\n`);
  }

  /** A hint for the person (what to run next) on stderr, so stdout stays the result. */
  hint(text: string): void {
    this.stderr.write(`${withStyles(this.paint(text, "dim", this.stderr))}\n`);
  }

  /** `text` in `style`, for `line`: the style's escapes are marked as this program's own. */
  paint(text: string, style: Style | undefined, stream: NodeJS.WriteStream = this.stdout): string {
    if (!style || !this.color) return text;
    return styleText(style, visible(text), { stream, validateStream: true }).replaceAll("\x1b", STYLE_MARK);
  }

  /** A state or status, coloured by what it means. */
  state(state: string): Cell {
    return { text: state, style: STATE_STYLES[state] };
  }

  table(headers: string[], rows: Array<Array<Cell | string>>): void {
    const cells = rows.map((row) =>
      row.map((cell) =>
        typeof cell === "string" ? { text: visibleOnOneLine(cell) } : { ...cell, text: visibleOnOneLine(cell.text) },
      ),
    );
    const widths = headers.map((header, column) =>
      Math.max(header.length, ...cells.map((row) => row[column]?.text.length ?? 0)),
    );
    const render = (row: Cell[]) =>
      row
        .map((cell, column) => {
          const padded = column === row.length - 1 ? cell.text : cell.text.padEnd(widths[column] ?? 0);
          return this.paint(padded, cell.style);
        })
        .join("  ")
        .trimEnd();
    this.line(render(headers.map((header) => ({ text: header.toUpperCase(), style: "bold" }))));
    for (const row of cells) this.line(render(row));
  }
}

/** A value as one line of compact JSON, cut to `max` characters with an ellipsis. */
export function abbreviate(value: unknown, max = 48): string {
  const text = compact(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function compact(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A value in full, pretty-printed. */
export function pretty(value: unknown): string {
  if (value === undefined) return "(none)";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
