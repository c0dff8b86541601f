/** Console output of one pass, bounded: at most `maxLines` lines of at most `maxLineChars` characters. */
export class LogCollector {
  readonly lines: string[] = [];
  private dropped = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxLineChars: number,
  ) {}

  add(level: string, text: string): void {
    if (this.lines.length >= this.maxLines) {
      this.dropped++;
      if (this.dropped === 1) this.lines.push(`[logs truncated: more than ${this.maxLines} lines]`);
      return;
    }
    const prefix = level === "warn" ? "[warn] " : level === "error" ? "[error] " : "";
    const line = text.length > this.maxLineChars ? `${text.slice(0, this.maxLineChars)}… [${text.length - this.maxLineChars} more characters]` : text;
    this.lines.push(prefix + line);
  }
}
