/**
 * Progress of a long operation on stderr. On a terminal a spinner line is redrawn in place and
 * erased at the end. In a log or pipe nothing is printed for an operation that ends within a
 * second; a longer one prints a line then, and the latest count every five seconds. stdout is
 * never touched, so `--json` output stays one document.
 */
export class Progress {
  private text = "";
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = this.stream.isTTY === true;
    if (this.tty) {
      this.timer = setInterval(() => this.draw(), 100);
    } else {
      this.timer = setTimeout(() => {
        this.print();
        this.timer = setInterval(() => this.print(), 5_000);
        this.timer.unref();
      }, 1_000);
    }
    this.timer.unref();
  }

  update(text: string): void {
    this.text = text;
  }

  /** Ends the progress line; `summary` (if any) is printed as the last line. */
  done(summary?: string): void {
    clearInterval(this.timer);
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.tty && this.frame > 0) this.stream.write("\r\x1b[K");
    if (summary) this.stream.write(`${summary}\n`);
  }

  private draw(): void {
    const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    this.frame++;
    this.stream.write(
      `\r\x1b[K${frames[this.frame % frames.length]} ${this.label}${this.text ? `: ${this.text}` : "…"}`,
    );
  }

  private print(): void {
    this.stream.write(`${this.label}${this.text ? `: ${this.text}` : "…"}\n`);
  }
}
