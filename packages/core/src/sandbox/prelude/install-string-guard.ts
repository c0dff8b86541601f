/**
 * The string guard: parts that run INSIDE the sandbox (as source text, see prelude.ts) before any
 * model code, in the order sandbox-setup.ts calls them. Each references nothing but itself and what
 * it is handed, and captures the built-ins it uses before any program can replace them.
 *
 * Some String built-ins compare the needle at every position of the text, in native code neither
 * engine interrupts (R-SB-8): V8's `lastIndexOf`, quickjs-ng's `indexOf`, `lastIndexOf`, `includes`,
 * `split`, `replace` and `replaceAll`. A 120,000 character text and a 60,001 character needle took V8
 * a second per call, losing the termination request, and QuickJS minutes. So a call the built-in ends
 * within `maxComparisons` comparisons goes to it as made; a longer search runs over windows the
 * built-in searches within that bound, or by the two-way algorithm in JavaScript, linear in the text
 * and stopped at the deadline. A RegExp goes to its method as the built-in sends it (`search`, `match`
 * and `matchAll` search by a RegExp, which both engines stop).
 */

export type TwoWaySearch = ReturnType<typeof createTwoWaySearch>;
export type StringGuardTools = ReturnType<typeof createStringGuardTools>;

/**
 * The two-way string search (Crochemore–Perrin, as glibc's memmem), linear time and constant space:
 * the first `j` in [first, last] where the needle (not empty) starts in the text read forward or
 * `backward` (both strings reversed), or -1; `last + needle.length <= text.length`.
 */
export function createTwoWaySearch() {
  "use strict";
  const max = Math.max;
  return function twoWay(text: string, needle: string, first: number, last: number, backward: boolean): number {
    const length = needle.length;
    // The character at i read backward is at base - i; strings are read by index, which nothing can replace.
    const step = backward ? -1 : 1;
    const textBase = backward ? text.length - 1 : 0;
    const needleBase = backward ? length - 1 : 0;
    let period = 1;
    /** Where the needle's maximal suffix starts, minus one, by the character order (`flipped`: reversed). */
    function maximalSuffix(flipped: boolean): number {
      let best = -1;
      let start = 0;
      let offset = 1;
      let found = 1;
      while (start + offset < length) {
        const next = needle[needleBase + step * (start + offset)]!;
        const known = needle[needleBase + step * (best + offset)]!;
        if (next === known) {
          if (offset !== found) offset++;
          else {
            start += found;
            offset = 1;
          }
        } else if (next < known !== flipped) {
          start += offset;
          offset = 1;
          found = start - best;
        } else {
          best = start++;
          offset = found = 1;
        }
      }
      period = found;
      return best;
    }
    const byOrder = maximalSuffix(false);
    const periodByOrder = period;
    const byReverse = maximalSuffix(true);
    // The critical factorization: the later of the two suffixes, with its period.
    const critical = max(byOrder, byReverse) + 1;
    if (byReverse < byOrder) period = periodByOrder;
    let periodic = true;
    for (let index = 0; index < critical && periodic; index++)
      periodic = needle[needleBase + step * index] === needle[needleBase + step * (index + period)];
    // How far the needle moves when its right part matched but its left did not.
    let shift = period;
    if (!periodic) shift = max(critical, length - critical) + 1;
    let memory = 0;
    for (let at = first; at <= last; ) {
      // The right part, left to right, from what an earlier step already matched.
      let index = critical;
      if (memory > index) index = memory;
      while (index < length && needle[needleBase + step * index] === text[textBase + step * (at + index)]) index++;
      if (index < length) {
        at += index - critical + 1;
        memory = 0;
        continue;
      }
      // The left part, right to left, down to what is known to match.
      index = critical - 1;
      while (index >= memory && needle[needleBase + step * index] === text[textBase + step * (at + index)]) index--;
      if (index < memory) return at;
      at += shift;
      if (periodic) memory = length - period;
    }
    return -1;
  };
}

/**
 * What the wrapped methods share: captured built-ins, the searches and the conversions of the spec.
 * `bound` is the most character comparisons a search is left to the built-in for: 4,000,000 unless
 * set (tests set less), some 30 ms of QuickJS and 2 ms of V8 at worst.
 */
export function createStringGuardTools(twoWay: TwoWaySearch, bound?: number) {
  "use strict";
  const maxComparisons = bound ?? 4_000_000;
  const StringPrototype = String.prototype;
  const { apply, defineProperty: reflectDefineProperty, deleteProperty } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor } = Object;
  const { min, max, sqrt } = Math;
  const call = Function.prototype.call;
  /** `method` called as `uncurried(method)(receiver, ...args)`, whatever the program does to Function.prototype. */
  const uncurried = <Method extends (...args: never[]) => unknown>(method: Method) =>
    call.bind(method) as unknown as (receiver: unknown, ...args: Parameters<Method>) => ReturnType<Method>;
  const indexOf = uncurried(StringPrototype.indexOf);
  const lastIndexOf = uncurried(StringPrototype.lastIndexOf);
  const slice = uncurried(StringPrototype.slice);
  const source = uncurried(getOwnPropertyDescriptor(RegExp.prototype, "source")!.get!);
  const RegExpPrototype = RegExp.prototype;
  const matchSymbol = Symbol.match;
  /** A needle up to PREFIX long is searched by the built-in; a longer one where its start is found at most 256 times. */
  const PREFIX = 16;
  const widest = max(1, (maxComparisons / (PREFIX + 1)) | 0);
  /** Windows start as wide as the needle (so that slicing costs no more than searching), at least 1024, and grow. */
  const firstWidth = (length: number) => min(max(length, 1024), widest);
  const data = { __proto__: null, value: undefined as unknown, writable: true, enumerable: true, configurable: true };
  const none = Symbol("none");

  /** The first (`backward`: last) position in [start, end] where `needle` starts in `text`, or -1. */
  function inWindow(text: string, needle: string, start: number, end: number, backward: boolean): number {
    const length = needle.length;
    if (length > PREFIX) {
      // The built-in compares PREFIX + 1 times at most where the needle's start is not, `length` where it is.
      const prefix = slice(needle, 0, PREFIX);
      const region = slice(text, start, end + PREFIX);
      const most = min(maxComparisons / length, 256);
      let count = 0;
      for (let at = indexOf(region, prefix, 0); at !== -1 && count <= most; at = indexOf(region, prefix, at + 1))
        count++;
      if (count > most) return byTwoWay(text, needle, start, end, backward);
    }
    const part = slice(text, start, end + length);
    const at = backward ? lastIndexOf(part, needle, end - start) : indexOf(part, needle, 0);
    return at === -1 ? -1 : start + at;
  }
  function byTwoWay(text: string, needle: string, start: number, end: number, backward: boolean): number {
    if (!backward) return twoWay(text, needle, start, end, false);
    const last = text.length - needle.length;
    const at = twoWay(text, needle, last - end, last - start, true);
    return at === -1 ? -1 : last - at;
  }

  return {
    indexOf,
    slice,
    uncurried,
    none,
    /** Over a text this short, no search compares more than maxComparisons times, whatever the needle. */
    shortText: 2 * sqrt(maxComparisons) - 1,
    /** Whether the built-in searches `pattern`, a string, in `text` within maxComparisons comparisons. */
    cheap: (text: string, pattern: unknown): boolean =>
      typeof pattern === "string" && pattern.length * (text.length - pattern.length + 1) <= maxComparisons,
    /** StringIndexOf: where `needle` first starts in `text` at or after `from` (0 ≤ from ≤ text.length), or -1. */
    indexFrom(text: string, needle: string, from: number): number {
      const length = needle.length;
      const last = text.length - length;
      if (length === 0 || from > last) return length === 0 ? from : -1;
      if (length * (last - from + 1) <= maxComparisons) return indexOf(text, needle, from);
      if (length > widest) return twoWay(text, needle, from, last, false);
      for (let start = from, width = firstWidth(length); start <= last; width = min(width * 4, widest)) {
        const end = min(start + width - 1, last);
        const found = inWindow(text, needle, start, end, false);
        if (found !== -1) return found;
        start = end + 1;
      }
      return -1;
    },
    /** Where `needle` last starts in `text` at or before `from` (0 ≤ from ≤ text.length), or -1. */
    lastIndexFrom(text: string, needle: string, from: number): number {
      const length = needle.length;
      let end = min(from, text.length - length);
      if (length === 0 || end < 0) return length === 0 ? from : -1;
      if (length * (end + 1) <= maxComparisons) return lastIndexOf(text, needle, end);
      if (length > widest) return byTwoWay(text, needle, 0, end, true);
      for (let width = firstWidth(length); end >= 0; end -= width, width = min(width * 4, widest)) {
        const found = inWindow(text, needle, max(end - width + 1, 0), end, true);
        if (found !== -1) return found;
      }
      return -1;
    },
    /** ToString: a symbol throws, an object is asked once (a template literal converts as the spec does). */
    toText: (value: unknown): string => (typeof value === "string" ? value : `${value as string}`),
    /** ToIntegerOrInfinity of what ToNumber gave, clamped to [0, length]. */
    clamp: (number: number, length: number): number =>
      !(number > 0) ? 0 : number >= length ? length : number - (number % 1),
    /** IsRegExp: Symbol.match if the object has one, else whether it is a genuine RegExp (asked running no code). */
    isRegExp(value: unknown): boolean {
      if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
      const matcher = (value as Record<symbol, unknown>)[matchSymbol];
      if (matcher !== undefined) return !!matcher;
      try {
        return value !== RegExpPrototype && typeof source(value) === "string";
      } catch {
        return false;
      }
    },
    /**
     * What `native` does with the hook GetMethod(value, symbol) finds, or `none`. V8 looks it up on a
     * primitive too (as ES2023 did), quickjs-ng on an object only: `primitives` (see looksUpPrimitives).
     */
    viaHook(native: unknown, receiver: unknown, value: unknown, symbol: symbol, primitives: boolean, other: unknown) {
      if (value === null || value === undefined) return none;
      if (!primitives && typeof value !== "object" && typeof value !== "function") return none;
      const hook = (value as Record<symbol, unknown>)[symbol];
      if (hook === undefined || hook === null) return none;
      if (typeof hook === "function") return apply(hook, value, [receiver, other]);
      // Not callable: the built-in throws its own TypeError, given a stand-in holding the same.
      return apply(native as () => unknown, receiver, [{ __proto__: null, [symbol]: hook }, other]);
    },
    /** Whether the engine's `native` looks `symbol` up on a primitive argument; asked once, of a bigint, at setup. */
    looksUpPrimitives(native: unknown, symbol: symbol): boolean {
      const looked: boolean[] = [];
      defineProperty(BigInt.prototype, symbol, { configurable: true, get: () => void looked.push(true) });
      try {
        apply(native as () => unknown, "a", [1n, ""]);
      } finally {
        deleteProperty(BigInt.prototype, symbol);
      }
      return looked.length > 0;
    },
    /** Defines `array[index]` as the built-ins do: a setter the program put on Array.prototype does not run. */
    defineElement(array: unknown[], index: number, value: unknown): void {
      data.value = value;
      reflectDefineProperty(array, index, data as PropertyDescriptor);
      data.value = undefined;
    },
    /** Puts `wrapped` where `String.prototype[name]` was, as it was, with the built-in's `length`. */
    wrapMethod(name: string, wrapped: (...args: never[]) => unknown): void {
      const descriptor = getOwnPropertyDescriptor(StringPrototype, name)!;
      defineProperty(wrapped, "length", { value: (descriptor.value as { length: number }).length });
      defineProperty(StringPrototype, name, { ...descriptor, value: wrapped });
    },
  };
}

/** Wraps `indexOf`, `lastIndexOf` and `includes`; a string the built-in searches quickly goes to it as called. */
export function installStringSearchGuard(tools: StringGuardTools, only?: readonly string[]): void {
  "use strict";
  const { shortText, cheap, indexFrom, lastIndexFrom, toText, clamp, isRegExp, uncurried, wrapMethod } = tools;
  const indexOf = uncurried(String.prototype.indexOf);
  const lastIndexOf = uncurried(String.prototype.lastIndexOf);
  const includes = uncurried(String.prototype.includes);
  /** What the built-in gets instead of a RegExp, to throw its own TypeError without asking the program again. */
  const regExpStandIn = { __proto__: null, [Symbol.match]: true };
  const methods = {
    indexOf(this: unknown, searchString: unknown, position?: unknown) {
      if (typeof this === "string" && (this.length <= shortText || cheap(this, searchString)))
        return indexOf(this, searchString as string, position as number);
      // RequireObjectCoercible: the built-in throws its own TypeError.
      if (this === null || this === undefined) return indexOf(this, "");
      const text = toText(this);
      const needle = toText(searchString);
      return indexFrom(text, needle, clamp(+(position as number), text.length));
    },
    lastIndexOf(this: unknown, searchString: unknown, position?: unknown) {
      if (typeof this === "string" && (this.length <= shortText || cheap(this, searchString)))
        return lastIndexOf(this, searchString as string, position as number);
      if (this === null || this === undefined) return lastIndexOf(this, "");
      const text = toText(this);
      const needle = toText(searchString);
      const number = +(position as number);
      // A position that is NaN (or none) means the end.
      return lastIndexFrom(text, needle, number !== number ? text.length : clamp(number, text.length));
    },
    includes(this: unknown, searchString: unknown, position?: unknown) {
      if (typeof this === "string" && (this.length <= shortText || cheap(this, searchString)))
        return includes(this, searchString as string, position as number);
      if (this === null || this === undefined) return includes(this, "");
      const text = toText(this);
      if (isRegExp(searchString)) return includes(text, regExpStandIn as never);
      const needle = toText(searchString);
      return indexFrom(text, needle, clamp(+(position as number), text.length)) !== -1;
    },
  };
  for (const name in methods) if (!only || only.includes(name)) wrapMethod(name, methods[name as keyof typeof methods]);
}

/** Wraps `split`, `replace` and `replaceAll`, as installStringSearchGuard the others. */
export function installStringReplaceGuard(tools: StringGuardTools, only?: readonly string[]): void {
  "use strict";
  const { shortText, cheap, indexFrom, toText, isRegExp, viaHook, none, looksUpPrimitives, defineElement } = tools;
  const { indexOf, slice, uncurried, wrapMethod } = tools;
  const StringPrototype = String.prototype;
  const nativeSplit = StringPrototype.split;
  const nativeReplace = StringPrototype.replace;
  const nativeReplaceAll = StringPrototype.replaceAll;
  const [split, replace, replaceAll] = [uncurried(nativeSplit), uncurried(nativeReplace), uncurried(nativeReplaceAll)];
  const apply = Reflect.apply;
  const [splitSymbol, replaceSymbol, matchSymbol] = [Symbol.split, Symbol.replace, Symbol.match];
  const splitOnPrimitives = looksUpPrimitives(nativeSplit, splitSymbol);
  const replaceOnPrimitives = looksUpPrimitives(nativeReplace, replaceSymbol);
  const replaceAllOnPrimitives = looksUpPrimitives(nativeReplaceAll, replaceSymbol);
  type Replacement = string | ((...args: unknown[]) => unknown);

  /** GetSubstitution for a string pattern: only $$, $&, $` and $' mean something (there are no captures). */
  function substitute(text: string, matched: string, at: number, template: string): string {
    let result = "";
    let from = 0;
    for (let dollar = indexOf(template, "$", 0); dollar !== -1 && dollar < template.length - 1; ) {
      const next = template[dollar + 1];
      let piece = next === "$" ? "$" : next === "&" ? matched : undefined;
      if (next === "`") piece = slice(text, 0, at);
      else if (next === "'") piece = slice(text, at + matched.length, text.length);
      if (piece !== undefined) {
        result += slice(template, from, dollar) + piece;
        from = dollar + 2;
      }
      dollar = indexOf(template, "$", piece === undefined ? dollar + 1 : dollar + 2);
    }
    return from === 0 ? template : result + slice(template, from, template.length);
  }
  /** The text, the needle and the replacement, converted in spec order, and the replacement of the match at `at`. */
  function converted(receiver: unknown, searchValue: unknown, replaceValue: unknown) {
    const text = toText(receiver);
    const needle = toText(searchValue);
    const replacement = typeof replaceValue === "function" ? (replaceValue as Replacement) : toText(replaceValue);
    const replaced = (at: number): string =>
      typeof replacement === "string"
        ? substitute(text, needle, at, replacement)
        : toText(apply(replacement, undefined, [needle, at, text]));
    return { text, needle, replaced };
  }

  const methods = {
    split(this: unknown, separator: unknown, limit?: unknown) {
      if (typeof this === "string" && (this.length <= shortText || cheap(this, separator)))
        return split(this, separator as never, limit as never);
      if (this === null || this === undefined) return apply(nativeSplit, this, []);
      const hooked = viaHook(nativeSplit, this, separator, splitSymbol, splitOnPrimitives, limit);
      if (hooked !== none) return hooked;
      const text = toText(this);
      const most = limit === undefined ? 4294967295 : (limit as number) >>> 0;
      const needle = toText(separator);
      const parts: string[] = [];
      if (most === 0) return parts;
      if (separator === undefined || (text.length === 0 && needle.length > 0)) return [text];
      if (needle.length === 0) {
        for (let index = 0; index < most && index < text.length; index++) defineElement(parts, index, text[index]);
        return parts;
      }
      let from = 0;
      for (let at = indexFrom(text, needle, 0); at !== -1; at = indexFrom(text, needle, from)) {
        defineElement(parts, parts.length, slice(text, from, at));
        if (parts.length === most) return parts;
        from = at + needle.length;
      }
      defineElement(parts, parts.length, slice(text, from, text.length));
      return parts;
    },
    replace(this: unknown, searchValue: unknown, replaceValue: unknown) {
      if (typeof this === "string" && (this.length <= shortText || cheap(this, searchValue)))
        return replace(this, searchValue as never, replaceValue as never);
      if (this === null || this === undefined) return apply(nativeReplace, this, []);
      const hooked = viaHook(nativeReplace, this, searchValue, replaceSymbol, replaceOnPrimitives, replaceValue);
      if (hooked !== none) return hooked;
      const { text, needle, replaced } = converted(this, searchValue, replaceValue);
      const at = indexFrom(text, needle, 0);
      if (at === -1) return text;
      const rest = slice(text, at + needle.length, text.length);
      return slice(text, 0, at) + replaced(at) + rest;
    },
    replaceAll(this: unknown, searchValue: unknown, replaceValue: unknown) {
      if (typeof this === "string" && (this.length <= shortText || cheap(this, searchValue)))
        return replaceAll(this, searchValue as never, replaceValue as never);
      if (this === null || this === undefined) return apply(nativeReplaceAll, this, []);
      if (isRegExp(searchValue)) {
        const flags = (searchValue as { flags: unknown }).flags;
        // No flags, or not global: the built-in throws its own TypeError, given a stand-in that answers the same.
        const missing = flags === undefined || flags === null;
        if (missing || indexOf(toText(flags), "g", 0) === -1) {
          const standIn = { __proto__: null, [matchSymbol]: true, flags: missing ? flags : "" };
          return apply(nativeReplaceAll, this, [standIn, replaceValue]);
        }
      }
      const hooked = viaHook(nativeReplaceAll, this, searchValue, replaceSymbol, replaceAllOnPrimitives, replaceValue);
      if (hooked !== none) return hooked;
      const { text, needle, replaced } = converted(this, searchValue, replaceValue);
      let result = "";
      let end = 0;
      // Each match is found as its replacement is made, not all before: what the replacer does cannot change them.
      for (let at = indexFrom(text, needle, 0); at !== -1; ) {
        result += slice(text, end, at) + replaced(at);
        end = at + needle.length;
        const next = end > at ? end : at + 1;
        at = next <= text.length ? indexFrom(text, needle, next) : -1;
      }
      return end < text.length ? result + slice(text, end, text.length) : result;
    },
  };
  for (const name in methods) if (!only || only.includes(name)) wrapMethod(name, methods[name as keyof typeof methods]);
}
