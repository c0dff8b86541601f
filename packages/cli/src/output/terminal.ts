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

  line(text = ""): void {
    this.stdout.write(`${text}\n`);
  }

  /** The command's result as one JSON document. */
  document(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A hint for the person (what to run next) on stderr, so stdout stays the result. */
  hint(text: string): void {
    this.stderr.write(`${this.paint(text, "dim", this.stderr)}\n`);
  }

  paint(text: string, style: Style | undefined, stream: NodeJS.WriteStream = this.stdout): string {
    if (!style || !this.color) return text;
    return styleText(style, text, { stream, validateStream: true });
  }

  /** A state or status, coloured by what it means. */
  state(state: string): Cell {
    return { text: state, style: STATE_STYLES[state] };
  }

  table(headers: string[], rows: Array<Array<Cell | string>>): void {
    const cells = rows.map((row) => row.map((cell) => (typeof cell === "string" ? { text: cell } : cell)));
    const widths = headers.map((header, column) => Math.max(header.length, ...cells.map((row) => row[column]?.text.length ?? 0)));
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
