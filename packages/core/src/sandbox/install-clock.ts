/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Replaces `Date` with one whose clock stands still at `clockMs`, the execution's
 * start time stored on its head (R-SB-6): a step's fn is skipped on replay, so a moving clock
 * would read differently on each pass. Dates built from arguments, `Date.parse`, `Date.UTC`,
 * `instanceof Date` and `Date.prototype` work as usual.
 */
export function installClock(global: Record<string, unknown>, clockMs: number): void {
  "use strict";
  const OriginalDate = Date;
  const ReflectConstruct = Reflect.construct;
  const ObjectDefineProperty = Object.defineProperty;

  const StableDate = function Date(this: unknown, ...args: unknown[]) {
    if (!new.target) return new OriginalDate(clockMs).toString();
    return ReflectConstruct(OriginalDate, args.length === 0 ? [clockMs] : args, new.target);
  } as unknown as DateConstructor;
  ObjectDefineProperty(StableDate, "prototype", { value: OriginalDate.prototype, writable: false });
  ObjectDefineProperty(StableDate, "now", { value: function now() { return clockMs; }, writable: true, configurable: true });
  ObjectDefineProperty(StableDate, "parse", { value: OriginalDate.parse, writable: true, configurable: true });
  ObjectDefineProperty(StableDate, "UTC", { value: OriginalDate.UTC, writable: true, configurable: true });
  ObjectDefineProperty(OriginalDate.prototype, "constructor", { value: StableDate, writable: true, configurable: true });
  global.Date = StableDate;
}
