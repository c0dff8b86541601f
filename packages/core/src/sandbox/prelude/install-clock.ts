import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Replaces `Date` with one whose clock stands still at `clockMs`, the execution's
 * start time stored on its head (R-SB-6): a step's fn is skipped on replay, so a moving clock
 * would read differently on each pass. `Date.UTC`, `instanceof Date` and `Date.prototype` work
 * as usual.
 *
 * Local time is UTC (issue 17.10): a date built from components (`new Date(2024, 0, 2)`) or
 * parsed from a text without a zone (`"2024-01-02T03:04"`) reads as UTC, not as the host's time
 * zone, so a run paused on one host and resumed on another sees the same values.
 * `install-time-zone.ts` does the same for the methods of dates and for `Intl`.
 */
export function installClock(intrinsics: SandboxIntrinsics, global: Record<string, unknown>, clockMs: number): void {
  "use strict";
  const { ReflectConstruct, ReflectApply, ObjectDefineProperty, StringCtor } = intrinsics;
  const OriginalDate = Date;
  const OriginalParse = Date.parse;
  const OriginalUTC = Date.UTC;
  const GetTimezoneOffset = Date.prototype.getTimezoneOffset;
  const RegExpTest = RegExp.prototype.test;
  // A zone written in the text: a Z or an offset after a time, or a zone name V8 reads.
  const ZONE = /\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:Z|[+-]\d\d:?\d\d)|\b(?:UTC|UT|GMT|[ECMP][SD]T)\b/i;
  // ISO date-only forms are UTC already (ECMA-262 Date Time String Format).
  const ISO_DATE_ONLY = /^\s*[+-]?\d{4,6}(?:-\d\d(?:-\d\d)?)?\s*$/;

  /** `Date.parse` with local time read as UTC: V8 parsed a zoneless date-time with the host's offset. */
  function parse(this: unknown, text: unknown): number {
    const string = StringCtor(text);
    const time = OriginalParse(string);
    if (time !== time || ReflectApply(RegExpTest, ZONE, [string]) || ReflectApply(RegExpTest, ISO_DATE_ONLY, [string]))
      return time;
    return time - (ReflectApply(GetTimezoneOffset, new OriginalDate(time), []) as number) * 60_000;
  }

  const StableDate = function Date(this: unknown, ...args: unknown[]) {
    if (!new.target) return new OriginalDate(clockMs).toString();
    let time: unknown[] = args;
    if (args.length === 0) time = [clockMs];
    else if (args.length === 1 && typeof args[0] === "string") time = [parse(args[0])];
    else if (args.length >= 2) time = [ReflectApply(OriginalUTC, undefined, args)];
    return ReflectConstruct(OriginalDate, time, new.target);
  } as unknown as DateConstructor;
  ObjectDefineProperty(StableDate, "prototype", { value: OriginalDate.prototype, writable: false });
  ObjectDefineProperty(StableDate, "now", {
    value: function now() {
      return clockMs;
    },
    writable: true,
    configurable: true,
  });
  ObjectDefineProperty(StableDate, "parse", { value: parse, writable: true, configurable: true });
  ObjectDefineProperty(StableDate, "UTC", { value: OriginalDate.UTC, writable: true, configurable: true });
  ObjectDefineProperty(StableDate, "length", { value: 7, configurable: true });
  ObjectDefineProperty(OriginalDate.prototype, "constructor", {
    value: StableDate,
    writable: true,
    configurable: true,
  });
  global.Date = StableDate;
}
