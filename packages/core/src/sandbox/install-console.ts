import type { ValueCodec } from "./value-codec.js";

/** Text of values and thrown things, as the sandbox shows them; none of these ever throws. */
export interface SandboxFormatter {
  /** One console argument as text: strings as they are, data as wire text, errors with their stack. */
  formatValue(value: unknown): string;
  /** What a program (or a step's fn) threw, as the message the host records. */
  describeThrown(error: unknown): string;
  /** A thrown value's message that never runs into a second throw (getters, Proxy traps). */
  messageOf(error: unknown, fallback: string): string;
}

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Values a program logs or throws are hostile: a getter or a Proxy trap may
 * throw, so every path falls back to simpler text.
 */
export function createFormatter(codec: ValueCodec): SandboxFormatter {
  "use strict";
  const ErrorCtor = Error;
  const StringCtor = String;

  function messageOf(error: unknown, fallback: string): string {
    try {
      if (error instanceof ErrorCtor) return StringCtor(error.message);
    } catch {
      // Fall through to the fallback.
    }
    return fallback;
  }

  function describeThrown(error: unknown): string {
    try {
      if (error instanceof ErrorCtor) return `${error.name}: ${error.message}`;
      return `Uncaught ${formatValue(error)}`;
    } catch {
      return "Uncaught exception (it could not be described)";
    }
  }

  function formatValue(value: unknown): string {
    try {
      if (typeof value === "string") return value;
      if (value instanceof ErrorCtor) return value.stack ? StringCtor(value.stack) : `${value.name}: ${value.message}`;
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

  return { formatValue, describeThrown, messageOf };
}

/**
 * Runs INSIDE the sandbox: installs `console` (log, info, debug, warn, error). Each call becomes
 * one line handed to the host's `log` callback, which keeps it in the pass's logs.
 */
export function installConsole(
  global: Record<string, unknown>,
  formatValue: (value: unknown) => string,
  log: (level: string, text: string) => void,
): void {
  "use strict";
  const ObjectFreeze = Object.freeze;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;

  function makeLogger(level: string) {
    return function (...args: unknown[]) {
      let line = "";
      for (let index = 0; index < args.length; index++) line += (index > 0 ? " " : "") + formatValue(args[index]);
      log(level, line);
    };
  }
  const consoleObject: Record<string, unknown> = ObjectCreate(null);
  consoleObject.log = makeLogger("log");
  consoleObject.info = makeLogger("info");
  consoleObject.debug = makeLogger("debug");
  consoleObject.warn = makeLogger("warn");
  consoleObject.error = makeLogger("error");
  ObjectDefineProperty(global, "console", { value: ObjectFreeze(consoleObject), enumerable: false, configurable: true, writable: true });
}
