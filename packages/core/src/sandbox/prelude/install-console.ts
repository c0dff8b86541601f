import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { ValueCodec } from "./value-codec.js";

/** Text of values and thrown things, as the sandbox shows them; none of these ever throws. */
export interface SandboxFormatter {
  /** One console argument as text: strings as they are, data as wire text, errors with their stack. */
  formatValue(value: unknown): string;
  /** What a program (or a step's fn) threw, as the message the host records. */
  describeThrown(error: unknown): string;
  /** A thrown value's message that never runs into a second throw (getters, Proxy traps). */
  messageOf(error: unknown, fallback: string): string;
  /**
   * `text` cut to `maxChars` with a note of what was left out, read only when it is at most
   * `maxReadChars` long (reading a string built by concatenation flattens it in the heap).
   */
  clip(text: string, maxChars: number): string;
}

/** The bounds the formatter needs (see sandbox-limits.ts). */
export interface FormatterLimits {
  maxMessageChars: number;
  maxReadChars: number;
}

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Values a program logs or throws are hostile: a getter or a Proxy trap may
 * throw, so every path falls back to simpler text. Messages are cut here, before they cross to
 * the host: the copy isolated-vm makes is flat, whatever the string cost the sandbox.
 */
export function createFormatter(
  intrinsics: SandboxIntrinsics,
  codec: ValueCodec,
  limits: FormatterLimits,
): SandboxFormatter {
  "use strict";
  const { ErrorCtor, StringCtor, StringSlice, ReflectApply } = intrinsics;
  const { maxMessageChars, maxReadChars } = limits;
  // V8's `stack` starts with the error's "name: message" line; QuickJS's holds only the frames,
  // and gets the line added. Probed before any program runs, so V8's output is what it always was.
  const stackHasHead = StringCtor(new ErrorCtor("probe").stack).slice(0, 12) === "Error: probe";

  function clip(text: string, maxChars: number): string {
    const length = text.length;
    if (length <= maxChars) return text;
    if (length > maxReadChars) return `[${length} characters, not shown]`;
    return `${ReflectApply(StringSlice, text, [0, maxChars]) as string}… [${length - maxChars} more characters]`;
  }

  function messageOf(error: unknown, fallback: string): string {
    try {
      if (error instanceof ErrorCtor) return clip(StringCtor(error.message), maxMessageChars);
    } catch {
      // Fall through to the fallback.
    }
    return fallback;
  }

  function describeThrown(error: unknown): string {
    try {
      if (error instanceof ErrorCtor)
        return `${clip(StringCtor(error.name), 200)}: ${clip(StringCtor(error.message), maxMessageChars)}`;
      return `Uncaught ${clip(formatValue(error), maxMessageChars)}`;
    } catch {
      return "Uncaught exception (it could not be described)";
    }
  }

  function formatValue(value: unknown): string {
    try {
      if (typeof value === "string") return value;
      if (value instanceof ErrorCtor) {
        if (!value.stack) return `${value.name}: ${value.message}`;
        return stackHasHead ? StringCtor(value.stack) : `${value.name}: ${value.message}\n${StringCtor(value.stack)}`;
      }
      if (typeof value === "function") return `[Function ${(value as { name?: string }).name || "anonymous"}]`;
      if (typeof value === "symbol" || typeof value === "bigint" || value === undefined) return StringCtor(value);
      const text = codec.encode(value);
      return text === undefined ? StringCtor(value) : text;
    } catch {
      try {
        return StringCtor(value);
      } catch {
        return "[unprintable value]";
      }
    }
  }

  return { formatValue, describeThrown, messageOf, clip };
}

/** The console bounds (see sandbox-limits.ts). */
export interface ConsoleLimits {
  maxLogLines: number;
  maxLogLineChars: number;
  maxLogChars: number;
  maxReadChars: number;
}

/**
 * Runs INSIDE the sandbox: installs `console` (log, info, debug, warn, error). Each call becomes
 * one line handed to the host's `log` callback, which keeps it in the pass's logs. Lines are cut
 * to `maxLogLineChars` here, and once a pass has sent more than `maxLogLines` lines or
 * `maxLogChars` characters nothing more is sent: the host keeps no more and notes the cut.
 */
export function installConsole(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  formatValue: (value: unknown) => string,
  log: (level: string, text: string) => void,
  limits: ConsoleLimits,
): void {
  "use strict";
  const { ObjectFreeze, ObjectCreate, ObjectDefineProperty, StringSlice, ReflectApply } = intrinsics;
  const { maxLogLines, maxLogLineChars, maxLogChars, maxReadChars } = limits;
  let sentLines = 0;
  let sentChars = 0;

  /** The pieces joined by spaces, cut at `maxLogLineChars`; a piece too long to read is only counted. */
  function lineOf(args: unknown[]): string {
    let line = "";
    let omitted = 0;
    for (let index = 0; index < args.length; index++) {
      const piece = formatValue(args[index]);
      const separator = index > 0 ? " " : "";
      const room = maxLogLineChars - line.length;
      if (omitted === 0 && separator.length + piece.length <= room) {
        line += separator + piece;
      } else if (omitted === 0 && piece.length <= maxReadChars && room > separator.length) {
        const kept = room - separator.length;
        line += separator + (ReflectApply(StringSlice, piece, [0, kept]) as string);
        omitted += piece.length - kept;
      } else {
        omitted += separator.length + piece.length;
      }
    }
    return omitted > 0 ? `${line}… [${omitted} more characters]` : line;
  }

  function makeLogger(level: string) {
    return function (...args: unknown[]) {
      // One line past each bound reaches the host, so that it knows to note the cut.
      if (sentLines > maxLogLines || sentChars > maxLogChars) return;
      const text = lineOf(args);
      sentLines++;
      sentChars += text.length;
      log(level, text);
    };
  }
  const consoleObject: Record<string, unknown> = ObjectCreate(null);
  consoleObject.log = makeLogger("log");
  consoleObject.info = makeLogger("info");
  consoleObject.debug = makeLogger("debug");
  consoleObject.warn = makeLogger("warn");
  consoleObject.error = makeLogger("error");
  ObjectDefineProperty(global, "console", {
    value: ObjectFreeze(consoleObject),
    enumerable: false,
    configurable: true,
    writable: true,
  });
}
