/**
 * Bounds on the text a pass may send to the host. Every string that crosses the bridge is cut or
 * refused INSIDE the sandbox, before isolated-vm copies it: a string built by doubling (`s += s`)
 * costs the sandbox almost nothing (V8 keeps it as a tree of references), but a copy is flat, so
 * one console.log of it used to put half a gigabyte on the host's heap. The host checks the same
 * bounds again on what arrives.
 */
export interface SandboxLimits {
  /** Console lines kept per pass. Default 1 000. */
  maxLogLines: number;
  /** Characters kept per console line; longer lines are cut with a note. Default 10 000. */
  maxLogLineChars: number;
  /** Characters of console output kept per pass, all lines together. Default 1 000 000. */
  maxLogChars: number;
  /** Characters kept of an error message (a throw, a step's error, why a value cannot be encoded). Default 10 000. */
  maxMessageChars: number;
  /**
   * Characters of wire text one value may have when it goes to the host to be kept (a connector
   * argument, a step's value, a step's name): larger ones end the pass with VALUE_TOO_LARGE and
   * are never copied. The final result is not bounded (R-DV-2). Default 64 MiB; the runtime
   * passes its durable limit (1 000 000, R-DV-1).
   */
  maxValueChars: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  maxLogLines: 1_000,
  maxLogLineChars: 10_000,
  maxLogChars: 1_000_000,
  maxMessageChars: 10_000,
  maxValueChars: 64 * 1024 * 1024,
};

/**
 * Longest string the sandbox reads to cut it. Cutting reads the text, and reading a string built
 * by concatenation makes V8 flatten it (a copy of its full length in the sandbox's heap); longer
 * strings are described by their length only.
 */
export const MAX_READ_CHARS = 16 * 1024 * 1024;

/**
 * Longest program the executor reads. Code is parsed on the host's thread before the sandbox
 * starts (linear in its size, see linear-acorn.ts), and that time counts against the pass's
 * timeout. The runtime refuses longer code before storing it (R-DV-1, VALUE_TOO_LARGE).
 */
export const MAX_CODE_CHARS = 1_000_000;

/**
 * `Intl` objects a pass may create: each keeps ICU data (up to ~30 KB) in host memory that the
 * heap limit does not count (see install-intl-guard.ts).
 */
export const MAX_INTL_OBJECTS = 1_000;

/** What a cut text looks like, on both sides of the bridge: `prefix… [N more characters]`. */
export function clipText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // A fresh flat copy: a slice would keep the whole original alive on the host's heap.
  const kept = Buffer.from(text.slice(0, maxChars), "utf16le").toString("utf16le");
  return `${kept}… [${text.length - maxChars} more characters]`;
}

/**
 * Room a cut text may take beyond its limit (the note). The host re-cuts only what exceeds the
 * limit by more than this, so a line the sandbox already cut is not cut twice.
 */
export const CLIP_NOTE_CHARS = 64;
