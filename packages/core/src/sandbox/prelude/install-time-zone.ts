import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";

/** What makes the sandbox's time zone UTC: applied on first use of `Date` and of `Intl`. */
export interface UtcTimeZone {
  /** Makes the local-time methods of `Date.prototype` their UTC counterparts. */
  patchDates(OriginalDate: DateConstructor): void;
  /** Makes `Intl.DateTimeFormat` default to UTC and format the execution's clock. */
  patchIntl(intl: Record<string, unknown>): void;
}

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts) with `deterministic`: it may
 * reference nothing outside itself. The sandbox's time zone is UTC and `Intl` reads the
 * replay-stable clock (R-SB-6, issue 17.10). Without this, `getHours()`, `toString()` or
 * `toLocaleString()` depended on the host's time zone (a run paused on one host and approved on
 * another diverged), and `new Intl.DateTimeFormat().format()` read the real clock.
 *
 * - the local-time methods of dates (`getHours`, `setDate`, `getTimezoneOffset`, `toString`, …)
 *   are their UTC counterparts;
 * - `toLocaleString` & co and `Intl.DateTimeFormat` default to `timeZone: "UTC"`;
 * - `format()` and `formatToParts()` without a date format the execution's clock.
 *
 * The patches are applied when the program first reads `Date` or `Intl` (see sandbox-setup.ts and
 * installIntlGuard): a program that uses neither pays nothing for them.
 */
export function createUtcTimeZone(
  intrinsics: SandboxIntrinsics,
  clockMs: number,
  createDates: typeof createUtcDates,
): UtcTimeZone {
  "use strict";
  const { ReflectApply, ReflectConstruct, ReflectOwnKeys, ObjectCreate, ObjectDefineProperty, ObjectCtor } = intrinsics;
  const { WeakMapCtor, WeakMapGet, WeakMapSet, descriptorOf, defineValue } = intrinsics;
  type Method = (...args: unknown[]) => unknown;

  /** Options whose `timeZone` is read here once and is "UTC" unless the program named one. */
  function inUtc(options: unknown): unknown {
    if (options === null) return options;
    const base = options === undefined ? null : ObjectCtor(options);
    const timeZone = base === null ? undefined : (base as { timeZone?: unknown }).timeZone;
    const utc = ObjectCreate(base) as object;
    ObjectDefineProperty(utc, "timeZone", {
      __proto__: null,
      value: timeZone === undefined ? "UTC" : timeZone,
      enumerable: true,
    } as PropertyDescriptor);
    return utc;
  }

  /**
   * Runs on the program's first read of `Intl` (see installIntlGuard), possibly after it
   * poisoned prototypes: captured built-ins, index loops and null-prototype descriptors only.
   */
  function patchIntl(intl: Record<string, unknown>): void {
    const OriginalFormat = intl.DateTimeFormat as (new (...args: unknown[]) => object) | undefined;
    if (typeof OriginalFormat !== "function") return;
    const DateTimeFormat = function DateTimeFormat(this: unknown, locales?: unknown, options?: unknown) {
      const args = [locales, inUtc(options)];
      return new.target
        ? ReflectConstruct(OriginalFormat, args, new.target)
        : ReflectApply(OriginalFormat as unknown as Method, this, args);
    };
    const keys = ReflectOwnKeys(OriginalFormat);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      if (key !== "name") ObjectDefineProperty(DateTimeFormat, key, descriptorOf(OriginalFormat, key)!);
    }
    const formatProto = OriginalFormat.prototype as Record<string, unknown>;
    defineValue(formatProto, "constructor", DateTimeFormat);
    defineValue(intl, "DateTimeFormat", DateTimeFormat);

    // `format` is a getter of a function bound to its formatter, the same one on every read.
    const formatGetter = (descriptorOf(formatProto, "format") as { get: Method }).get;
    const stableFormats = new WeakMapCtor<object, (date?: unknown) => string>();
    ObjectDefineProperty(formatProto, "format", {
      __proto__: null,
      configurable: true,
      get: function format(this: unknown) {
        const bound = ReflectApply(formatGetter, this, []) as (date?: unknown) => string;
        let stable = ReflectApply(WeakMapGet, stableFormats, [bound]) as ((date?: unknown) => string) | undefined;
        if (!stable) {
          stable = (date?: unknown) => bound(date === undefined ? clockMs : date);
          ReflectApply(WeakMapSet, stableFormats, [bound, stable]);
        }
        return stable;
      },
    } as PropertyDescriptor);
    const originalFormatToParts = formatProto.formatToParts as Method;
    ObjectDefineProperty(formatProto, "formatToParts", {
      __proto__: null,
      configurable: true,
      writable: true,
      value: function formatToParts(this: unknown, date?: unknown): unknown {
        return ReflectApply(originalFormatToParts, this, [date === undefined ? clockMs : date]);
      },
    } as PropertyDescriptor);
  }

  return { patchDates: createDates(intrinsics, inUtc), patchIntl };
}

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts) with `deterministic`: it may
 * reference nothing outside itself. Returns `patchDates` for createUtcTimeZone; `inUtc` gives
 * options a UTC default time zone.
 */
export function createUtcDates(
  intrinsics: SandboxIntrinsics,
  inUtc: (options: unknown) => unknown,
): UtcTimeZone["patchDates"] {
  "use strict";
  const { ReflectApply, ObjectCreate, ObjectKeys, MathCeil, MathFloor, defineValue } = intrinsics;
  const PARTS = ["FullYear", "Month", "Date", "Day", "Hours", "Minutes", "Seconds", "Milliseconds"];
  const LOCALE_METHODS = ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"];
  const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  type Method = (...args: unknown[]) => unknown;
  const call = (fn: Method, self: unknown, args: unknown[] = []): unknown => ReflectApply(fn, self, args);
  /**
   * Runs on the program's first read of `Date` (see sandbox-setup.ts), possibly after it
   * poisoned prototypes: captured built-ins, index loops and null-prototype objects only. Every
   * date comes from `Date`, so its prototype is still untouched when this runs.
   */
  return function patchDates(OriginalDate: DateConstructor): void {
    const proto = OriginalDate.prototype as unknown as Record<string, Method>;
    const replace = (methods: Record<string, Method>): void => {
      const names = ObjectKeys(methods);
      for (let index = 0; index < names.length; index++) defineValue(proto, names[index]!, methods[names[index]!]);
    };
    const getTime = proto.getTime!;
    const setTime = proto.setTime!;
    const utc = (date: unknown, part: string): number => call(proto[`getUTC${part}`]!, date) as number;
    const methods = ObjectCreate(null) as Record<string, Method>;
    for (let index = 0; index < PARTS.length; index++) {
      const part = PARTS[index]!;
      const getUTC = proto[`getUTC${part}`]!;
      methods[`get${part}`] = {
        [`get${part}`](this: unknown) {
          return call(getUTC, this);
        },
      }[`get${part}`]!;
      if (part === "Day") continue;
      const setUTC = proto[`setUTC${part}`]!;
      methods[`set${part}`] = {
        [`set${part}`](this: unknown, ...args: unknown[]) {
          return call(setUTC, this, args);
        },
      }[`set${part}`]!;
    }
    const pad = (value: number, width: number): string => {
      let text = `${value}`;
      while (text.length < width) text = `0${text}`;
      return text;
    };
    const valid = (date: unknown): boolean => {
      const time = call(getTime, date) as number;
      return time === time;
    };
    const datePart = (date: unknown): string => {
      const year = utc(date, "FullYear");
      return `${DAYS[utc(date, "Day")]} ${MONTHS[utc(date, "Month")]} ${pad(utc(date, "Date"), 2)} ${year < 0 ? `-${pad(-year, 4)}` : pad(year, 4)}`;
    };
    const timePart = (date: unknown): string =>
      `${pad(utc(date, "Hours"), 2)}:${pad(utc(date, "Minutes"), 2)}:${pad(utc(date, "Seconds"), 2)} GMT+0000 (Coordinated Universal Time)`;
    for (let index = 0; index < LOCALE_METHODS.length; index++) {
      const name = LOCALE_METHODS[index]!;
      const original = proto[name]!;
      methods[name] = {
        [name](this: unknown, locales?: unknown, options?: unknown) {
          return call(original, this, [locales, inUtc(options)]);
        },
      }[name]!;
    }
    replace(methods);
    replace({
      getTimezoneOffset(this: unknown) {
        return valid(this) ? 0 : NaN;
      },
      getYear(this: unknown) {
        const year = utc(this, "FullYear");
        return year !== year ? NaN : year - 1900;
      },
      setYear(this: unknown, year: unknown) {
        const time = call(getTime, this) as number;
        const number = +(year as number);
        if (number !== number) return call(setTime, this, [NaN]);
        const whole = number < 0 ? MathCeil(number) : MathFloor(number);
        const copy = new OriginalDate(time !== time ? 0 : time);
        call(proto.setUTCFullYear!, copy, [whole >= 0 && whole <= 99 ? 1900 + whole : number]);
        return call(setTime, this, [call(getTime, copy)]);
      },
      toString(this: unknown) {
        return valid(this) ? `${datePart(this)} ${timePart(this)}` : "Invalid Date";
      },
      toDateString(this: unknown) {
        return valid(this) ? datePart(this) : "Invalid Date";
      },
      toTimeString(this: unknown) {
        return valid(this) ? timePart(this) : "Invalid Date";
      },
    });
  };
}
