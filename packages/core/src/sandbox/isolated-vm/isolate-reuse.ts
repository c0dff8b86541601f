// The `isolateReuse` option on its own, apart from the warm isolates that use it: the runtime checks
// the option where isolated-vm may not be installed at all.

/**
 * Warm isolates (`isolateReuse`): each pass still gets a context of its own, made for it alone,
 * in an isolate no other pass uses at that moment; the isolate outlives the pass.
 */
export interface IsolateReuse {
  /** Passes one isolate serves before it is disposed. Default 100. */
  maxPasses?: number;
  /** Age after which an isolate serves no further pass. Default 60 000 ms. */
  maxAgeMs?: number;
  /**
   * Warm isolates kept idle between passes at most; the rest are disposed. Default 64: as many
   * as passes ran at once lately stay warm (they were alive then anyway), and those idle longer
   * than `maxIdleMs` are disposed but the last.
   */
  maxIdle?: number;
  /** How long an isolate beyond the first may wait idle before it is disposed. Default 10 000 ms. */
  maxIdleMs?: number;
  /**
   * Disposed after a pass that leaves its heap above this share of the heap limit (garbage of
   * earlier passes included), so one pass filling the heap cannot make the next fail. Default 0.5.
   */
  maxHeapShare?: number;
  /**
   * Disposed after a pass that leaves its heap above this many MB in all (committed, garbage
   * included). Each context leaves garbage V8 collects lazily: a warm isolate settles at 12–16 MB
   * where a fresh one holds about 3, and a server with 100 passes in flight holds 100 of them.
   * Default 6.
   */
  maxHeapMb?: number;
}

/** `IsolateReuse` with every default filled in. */
export type IsolateReuseSettings = Required<IsolateReuse>;

export const DEFAULT_ISOLATE_REUSE: IsolateReuseSettings = {
  maxPasses: 100,
  maxAgeMs: 60_000,
  maxIdle: 64,
  maxIdleMs: 10_000,
  maxHeapShare: 0.5,
  maxHeapMb: 6,
};

/** Checks `isolateReuse` from plain JavaScript and fills in its defaults; undefined for off. */
export function isolateReuseSettings(option: IsolateReuse | boolean | undefined): IsolateReuseSettings | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { ...DEFAULT_ISOLATE_REUSE };
  if (typeof option !== "object" || option === null)
    throw new TypeError(
      "isolateReuse must be true, false or { maxPasses?, maxAgeMs?, maxIdle?, maxIdleMs?, maxHeapShare?, maxHeapMb? }",
    );
  const settings = { ...DEFAULT_ISOLATE_REUSE, ...definedOnly(option) };
  const whole = (name: keyof IsolateReuse, least: number, most: number) => {
    const value = settings[name];
    if (!Number.isInteger(value) || value < least || value > most)
      throw new TypeError(`isolateReuse.${name} must be a whole number from ${least} to ${most}; got ${String(value)}`);
  };
  whole("maxPasses", 1, 1_000_000);
  whole("maxAgeMs", 1, 86_400_000);
  whole("maxIdle", 0, 1_024);
  whole("maxIdleMs", 1, 86_400_000);
  if (typeof settings.maxHeapMb !== "number" || !(settings.maxHeapMb > 0 && settings.maxHeapMb <= 65_536))
    throw new TypeError(
      `isolateReuse.maxHeapMb must be a number above 0, at most 65536; got ${String(settings.maxHeapMb)}`,
    );
  if (typeof settings.maxHeapShare !== "number" || !(settings.maxHeapShare > 0 && settings.maxHeapShare <= 1))
    throw new TypeError(
      `isolateReuse.maxHeapShare must be a number above 0, at most 1; got ${String(settings.maxHeapShare)}`,
    );
  return settings;
}

function definedOnly(option: IsolateReuse): IsolateReuse {
  return Object.fromEntries(Object.entries(option).filter(([, value]) => value !== undefined));
}

/**
 * `CODEMODE_ISOLATE_REUSE` (`1`/`on`/`true`, or `0`/`off`/`false`): the default of `isolateReuse`
 * where the code sets none, so an operator can turn warm isolates on or off without a release
 * (and CI runs every suite both ways). Anything else is refused, naming the variable.
 */
export function isolateReuseFromEnvironment(): boolean | undefined {
  const value = process.env.CODEMODE_ISOLATE_REUSE?.trim().toLowerCase();
  if (value === undefined || value === "") return undefined;
  if (["1", "on", "true"].includes(value)) return true;
  if (["0", "off", "false"].includes(value)) return false;
  throw new TypeError(`CODEMODE_ISOLATE_REUSE must be 1, on, true, 0, off or false; got ${JSON.stringify(value)}`);
}
