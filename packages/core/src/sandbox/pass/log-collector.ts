import { CLIP_NOTE_CHARS, clipText } from "../sandbox-limits.js";

/**
 * Console output of one pass, bounded: at most `maxLines` lines of at most `maxLineChars`
 * characters, and `maxChars` characters in all. The sandbox cuts lines and stops sending at the
 * same bounds (install-console.ts); this keeps them whatever arrives.
 */
export class LogCollector {
  readonly lines: string[] = [];
  private chars = 0;
  private full = false;

  constructor(
    private readonly maxLines: number,
    private readonly maxLineChars: number,
    private readonly maxChars: number,
  ) {}

  add(level: string, text: string): void {
    if (this.full) return;
    if (this.lines.length >= this.maxLines) {
      this.full = true;
      this.lines.push(`[logs truncated: more than ${this.maxLines} lines]`);
      return;
    }
    const prefix = level === "warn" ? "[warn] " : level === "error" ? "[error] " : "";
    // The sandbox already cut the line, note included: cut again only what it could not have sent.
    const line =
      prefix + (text.length > this.maxLineChars + CLIP_NOTE_CHARS ? clipText(text, this.maxLineChars) : text);
    if (this.chars + line.length > this.maxChars) {
      this.full = true;
      this.lines.push(`[logs truncated: more than ${this.maxChars} characters]`);
      return;
    }
    this.chars += line.length;
    this.lines.push(line);
  }
}
