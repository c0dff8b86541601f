import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { ValueCodec } from "./value-codec.js";

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Installs `__codemode_start(main)`, the entry the compiled program calls once
 * (it deletes itself first). It runs `main` and reports how it ended through the host's `finish`
 * callback, once, with one text whose first letter says how: RESULT_RETURNED ("R") + wire text
 * of the value, RESULT_THREW ("T") + JSON `{ message, line, column }`, RESULT_INVALID ("N") + why
 * the value could not be encoded, RESULT_DENIED ("D") + JSON `{ message }` for a denial the
 * program did not catch. It returns nothing: the host never waits on a promise of the
 * isolate, because disposing an isolate whose `run` promise never settled (a program halted
 * while awaiting) makes a later `process.exit()` hang (R-RT-5).
 */
export function installStart(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  codec: ValueCodec,
  plain: (fields: Record<string, unknown>) => Record<string, unknown>,
  messageOf: (error: unknown, fallback: string) => string,
  describeThrown: (error: unknown) => string,
  finish: (text: string) => void,
  maxReadChars: number,
  denialText: (error: unknown) => string | undefined,
): void {
  "use strict";
  const { JSONStringify, ReflectApply, ObjectDefineProperty, PromiseResolve, PromiseThen, ErrorCtor, StringCtor } =
    intrinsics;

  ObjectDefineProperty(global, "__codemode_start", {
    configurable: true,
    value: function start(main: () => unknown): void {
      delete global.__codemode_start;
      let reported = false;
      const report = (text: string): void => {
        if (reported) return;
        reported = true;
        finish(text);
      };
      const returned = (value: unknown) => {
        let text: string;
        try {
          text = codec.encode(value) ?? "";
        } catch (error) {
          report("N" + messageOf(error, "the result could not be encoded"));
          return;
        }
        report("R" + text);
      };
      const threw = (error: unknown) => {
        // A denial the program did not catch ends the run as the person decided (R-AP-9).
        // Reported with the text it was delivered with: a program that rewrote its message cannot
        // put words in the person's mouth.
        const denied = denialText(error);
        if (denied !== undefined) {
          report("D" + JSONStringify(plain({ message: denied })));
          return;
        }
        let line: unknown = null;
        let column: unknown = null;
        try {
          // The stack's first line is the message: a message too long to read is never formatted.
          const readable = error instanceof ErrorCtor && StringCtor(error.message).length <= maxReadChars;
          const stack = readable ? StringCtor((error as Error).stack) : "";
          const match = /codemode\.js:(\d+):(\d+)/.exec(stack);
          if (match) {
            line = +match[1]!;
            column = +match[2]!;
          }
        } catch {
          // No position then.
        }
        report("T" + JSONStringify(plain({ message: describeThrown(error), line, column })));
      };
      try {
        ReflectApply(PromiseThen, PromiseResolve(main()), [returned, threw]);
      } catch (error) {
        threw(error);
      }
    },
  });
}
