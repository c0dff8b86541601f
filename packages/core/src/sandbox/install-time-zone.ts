/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts) with `deterministic`, after
 * `installClock`: it may reference nothing outside itself. The sandbox's time zone is UTC and
 * `Intl` reads the replay-stable clock (R-SB-6, issue 17.10). Without this, `getHours()`,
 * `toString()` or `toLocaleString()` depended on the host's time zone (a run paused on one host
 * and approved on another diverged), and `new Intl.DateTimeFormat().format()` read the real clock.
 *
 * - the local-time methods of dates (`getHours`, `setDate`, `getTimezoneOffset`, `toString`, …)
 *   are their UTC counterparts;
 * - `toLocaleString` & co and `Intl.DateTimeFormat` default to `timeZone: "UTC"`;
 * - `format()` and `formatToParts()` without a date format the execution's clock.
 */
export function installUtcTimeZone(global: Record<string, unknown>, clockMs: number): void {
  "use strict";
  const ReflectApply = Reflect.apply;
  const ReflectConstruct = Reflect.construct;
  const ReflectOwnKeys = Reflect.ownKeys;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectCtor = Object;
  const DateCtor = Date;
  const MathCeil = Math.ceil;
  const MathFloor = Math.floor;
  const WeakMapCtor = WeakMap;
  const WeakMapGet = WeakMap.prototype.get;
  const WeakMapSet = WeakMap.prototype.set;
  const proto = Date.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const method = (name: string, value: (this: unknown, ...args: never[]) => unknown): void => {
    ObjectDefineProperty(value, "name", { value: name, configurable: true });
    ObjectDefineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
  };
  const call = (fn: (...args: unknown[]) => unknown, self: unknown, args: unknown[] = []): unknown => ReflectApply(fn, self, args);

  for (const part of ["FullYear", "Month", "Date", "Day", "Hours", "Minutes", "Seconds", "Milliseconds"]) {
    const getUTC = proto[`getUTC${part}`]!;
    method(`get${part}`, function (this: unknown) {
      return call(getUTC, this);
    });
    if (part === "Day") continue;
    const setUTC = proto[`setUTC${part}`]!;
    method(`set${part}`, function (this: unknown, ...args: unknown[]) {
      return call(setUTC, this, args);
    });
  }
  const getTime = proto.getTime!;
  const setTime = proto.setTime!;
  const getUTCFullYear = proto.getUTCFullYear!;
  const setUTCFullYear = proto.setUTCFullYear!;
  method("getTimezoneOffset", function (this: unknown) {
    const time = call(getTime, this) as number;
    return time !== time ? NaN : 0;
  });
  method("getYear", function (this: unknown) {
    const year = call(getUTCFullYear, this) as number;
    return year !== year ? NaN : year - 1900;
  });
  method("setYear", function (this: unknown, year: unknown) {
    const time = call(getTime, this) as number;
    const number = +(year as number);
    if (number !== number) return call(setTime, this, [NaN]);
    const whole = number < 0 ? MathCeil(number) : MathFloor(number);
    const copy = new DateCtor(time !== time ? 0 : time);
    call(setUTCFullYear, copy, [whole >= 0 && whole <= 99 ? 1900 + whole : number]);
    return call(setTime, this, [call(getTime, copy)]);
  });

  const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const pad = (value: number, width: number): string => {
    let text = `${value}`;
    while (text.length < width) text = `0${text}`;
    return text;
  };
  const getUTC = (date: unknown, part: string) => call(proto[`getUTC${part}`]!, date) as number;
  const datePart = (date: unknown): string => {
    const year = getUTC(date, "FullYear");
    return `${DAYS[getUTC(date, "Day")]} ${MONTHS[getUTC(date, "Month")]} ${pad(getUTC(date, "Date"), 2)} ${year < 0 ? `-${pad(-year, 4)}` : pad(year, 4)}`;
  };
  const timePart = (date: unknown): string =>
    `${pad(getUTC(date, "Hours"), 2)}:${pad(getUTC(date, "Minutes"), 2)}:${pad(getUTC(date, "Seconds"), 2)} GMT+0000 (Coordinated Universal Time)`;
  const valid = (date: unknown): boolean => {
    const time = call(getTime, date) as number;
    return time === time;
  };
  method("toString", function (this: unknown) {
    return valid(this) ? `${datePart(this)} ${timePart(this)}` : "Invalid Date";
  });
  method("toDateString", function (this: unknown) {
    return valid(this) ? datePart(this) : "Invalid Date";
  });
  method("toTimeString", function (this: unknown) {
    return valid(this) ? timePart(this) : "Invalid Date";
  });

  /** Options whose `timeZone` is read here once and is "UTC" unless the program named one. */
  function inUtc(options: unknown): unknown {
    if (options === null) return options;
    const base = options === undefined ? null : ObjectCtor(options);
    const timeZone = base === null ? undefined : (base as { timeZone?: unknown }).timeZone;
    return ObjectCreate(base, { timeZone: { value: timeZone === undefined ? "UTC" : timeZone, enumerable: true } });
  }
  for (const name of ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"]) {
    const original = proto[name]!;
    method(name, function (this: unknown, locales?: unknown, options?: unknown) {
      return call(original, this, [locales, inUtc(options)]);
    });
  }

  const intl = global.Intl as Record<string, unknown> | undefined;
  const OriginalFormat = intl?.DateTimeFormat as (new (...args: unknown[]) => object) | undefined;
  if (!intl || typeof OriginalFormat !== "function") return;
  const DateTimeFormat = function DateTimeFormat(this: unknown, locales?: unknown, options?: unknown) {
    const args = [locales, inUtc(options)];
    return new.target ? ReflectConstruct(OriginalFormat, args, new.target) : ReflectApply(OriginalFormat as unknown as (...args: unknown[]) => unknown, this, args);
  };
  for (const key of ReflectOwnKeys(OriginalFormat)) {
    if (key !== "name") ObjectDefineProperty(DateTimeFormat, key, ObjectGetOwnPropertyDescriptor(OriginalFormat, key)!);
  }
  const formatProto = OriginalFormat.prototype as Record<string, unknown>;
  ObjectDefineProperty(formatProto, "constructor", { value: DateTimeFormat, writable: true, configurable: true });
  ObjectDefineProperty(intl, "DateTimeFormat", { value: DateTimeFormat, writable: true, configurable: true });

  // `format` is a getter of a function bound to its formatter, the same one on every read.
  const formatGetter = ObjectGetOwnPropertyDescriptor(formatProto, "format")!.get!;
  const stableFormats = new WeakMapCtor<object, (date?: unknown) => string>();
  ObjectDefineProperty(formatProto, "format", {
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
  });
  const originalFormatToParts = formatProto.formatToParts as (...args: unknown[]) => unknown;
  ObjectDefineProperty(formatProto, "formatToParts", {
    configurable: true,
    writable: true,
    value: function formatToParts(this: unknown, date?: unknown): unknown {
      return ReflectApply(originalFormatToParts, this, [date === undefined ? clockMs : date]);
    },
  });
}
