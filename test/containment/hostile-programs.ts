/**
 * The hostile-program corpus of the containment suite (R-SB-8, `npm run test:containment`): the
 * programs as data, each with the class the tables of the tests and of SECURITY-TABLE.md speak
 * of. Every program repeats its attack until something stops it, so a pass that a guard or the
 * engine defends still ends, at its deadline, as a TIMEOUT: what the tests catch is whatever holds
 * a pass, a thread or a process past that deadline, or takes a process down.
 */

/** The limits every corpus program runs under. */
export const LIMITS = { timeoutMs: 2_000, memoryMb: 64 } as const;

/**
 * The classes of hostile program, the rows of the tables:
 * - `growth`: a Map, a Set, an object, nested arrays or a string grown until the memory limit;
 * - `liar`: an Array built-in over an array-like, or a proxy of an array, whose `length` answers
 *   0 the first time and 2^53 − 1 after (a native loop of hours behind a check that read 0);
 * - `search`: long string searches, quadratic in the engine's own code;
 * - `regex`: regular expressions that backtrack exponentially;
 * - `parse`: `JSON.parse` of input of tens of megabytes built in the sandbox;
 * - `sort`: a million-element array sorted with a comparator, again and again.
 */
export type HostileClass = "growth" | "liar" | "search" | "regex" | "parse" | "sort";

export interface HostileProgram {
  /** Unique, as the tests name it: "liar indexOf", "growth Map". */
  name: string;
  kind: HostileClass;
  code: string;
}

/** Every Array.prototype method that loops over its receiver, with the arguments each is called with. */
export const LOOPING_ARRAY_METHODS: ReadonlyArray<[method: string, args: string]> = [
  ["indexOf", "1"],
  ["lastIndexOf", "1"],
  ["includes", "1"],
  ["join", '","'],
  ["toString", ""],
  ["toLocaleString", ""],
  ["forEach", "() => {}"],
  ["every", "() => true"],
  ["some", "() => false"],
  ["find", "() => false"],
  ["findIndex", "() => false"],
  ["findLast", "() => false"],
  ["findLastIndex", "() => false"],
  ["reduce", "(sum) => sum, 0"],
  ["reduceRight", "(sum) => sum, 0"],
  ["map", "(value) => value"],
  ["filter", "() => true"],
  ["flat", ""],
  ["flatMap", "(value) => value"],
  ["reverse", ""],
  ["copyWithin", "0, 1"],
  ["fill", "0"],
  ["splice", "0, 1"],
  ["shift", ""],
  ["unshift", "1"],
  ["toReversed", ""],
  ["toSpliced", "0, 1"],
  ["with", "0, 1"],
  ["sort", ""],
  ["toSorted", ""],
  ["concat", "[1]"],
];

/**
 * Answers `first` to the first read of `length`, then 2^53 − 1; takes any length written (so
 * `splice`, `shift` and `unshift` go on), `toString` finds `join`, `concat` spreads it.
 */
const ARRAY_LIKE_LIAR = (first: number) => `() => {
    let reads = 0;
    return {
      get length() { return reads++ === 0 ? ${first} : 2 ** 53 - 1; },
      set length(_) {},
      join: Array.prototype.join,
      [Symbol.isConcatSpreadable]: true,
    };
  }`;

/** A proxy of an array (Array.isArray says true) whose `get` trap lies about `length` the same way. */
const PROXY_LIAR = (first: number) => `() => {
    let reads = 0;
    return new Proxy([], {
      get(target, key, receiver) {
        if (key === "length") return reads++ === 0 ? ${first} : 2 ** 53 - 1;
        return Reflect.get(target, key, receiver);
      },
      set() { return true; },
    });
  }`;

function liar(kind: "array-like" | "proxy", method: string, args: string): HostileProgram {
  // A fresh liar per call: each one's first answer is the length a guard would check. `with`
  // refuses any index of an empty array, so its liar says 1 first.
  const first = method === "with" ? 1 : 0;
  const call =
    method === "concat"
      ? "Array.prototype.concat.call([], liar())"
      : `Array.prototype.${method}.call(liar()${args ? `, ${args}` : ""})`;
  return {
    name: `liar ${kind} ${method}`,
    kind: "liar",
    code: `async () => {
  const liar = ${kind === "proxy" ? PROXY_LIAR(first) : ARRAY_LIKE_LIAR(first)};
  for (;;) ${call};
}`,
  };
}

const GROWTH: HostileProgram[] = [
  {
    name: "growth Map",
    kind: "growth",
    code: "async () => { const grown = new Map(); for (let i = 0; ; i++) grown.set(i, i); }",
  },
  {
    name: "growth Set",
    kind: "growth",
    code: "async () => { const grown = new Set(); for (let i = 0; ; i++) grown.add(i); }",
  },
  {
    name: "growth object keys",
    kind: "growth",
    code: "async () => { const grown = {}; for (let i = 0; ; i++) grown['k' + i] = i; }",
  },
  {
    name: "growth nested arrays",
    kind: "growth",
    code: "async () => { let nested = []; for (let i = 0; ; i++) nested = [nested, [i, i + 1, i + 2]]; }",
  },
  {
    name: "growth string concatenation",
    kind: "growth",
    code: "async () => { let text = ''; for (let i = 0; ; i++) text += 'piece ' + i + ';'; }",
  },
];

/**
 * Needles that match everywhere but their last character, in haystacks of twice their length: a
 * naive search compares half the haystack at each of half its positions. QuickJS searches so in
 * every method (minutes per call); V8 finds `indexOf` and its kin in linear time, but not
 * `lastIndexOf`, whose haystack here is twice as long again: one call runs ~5 s in V8's native
 * code, where no deadline is seen.
 */
const SEARCH: HostileProgram[] = [
  ["indexOf", 120_000, "hay.indexOf(needle)"],
  ["includes", 120_000, "hay.includes(needle)"],
  ["lastIndexOf", 240_000, "hay.lastIndexOf(needle)"],
  ["split", 120_000, "hay.split(needle)"],
  ["replaceAll", 120_000, 'hay.replaceAll(needle, "")'],
].map(([method, length, search]) => ({
  name: `search ${method}`,
  kind: "search" as const,
  code: `async () => {
  const hay = "a".repeat(${length}); const needle = "a".repeat(${Number(length) / 2}) + "b";
  for (;;) ${search};
}`,
}));

const REGEX: HostileProgram[] = [
  ["nested quantifier", '/(a+)+$/.test("a".repeat(40) + "b")'],
  ["v flag", '/(a+)+$/v.test("a".repeat(40) + "b")'],
  ["lookbehind", '/(?<=^(a+)+b)c/.test("x" + "a".repeat(40) + "bc")'],
].map(([label, test]) => ({
  name: `regex ${label}`,
  kind: "regex" as const,
  code: `async () => { for (;;) ${test}; }`,
}));

const PARSE: HostileProgram = {
  name: "parse huge JSON",
  kind: "parse",
  // 22 MB of text, parsed again and again into arrays of two million strings kept alive.
  code: `async () => {
  const text = "[" + '"abcdefgh",'.repeat(2000000) + '""]';
  const kept = [];
  for (;;) kept.push(JSON.parse(text));
}`,
};

const SORT: HostileProgram = {
  name: "sort large array",
  kind: "sort",
  code: `async () => {
  const values = Array.from({ length: 1000000 }, (_, i) => (i * 7919) % 1000003);
  for (let round = 0; ; round++) values.sort(round % 2 ? (a, b) => a - b : (a, b) => b - a);
}`,
};

/** The whole corpus, in the order of the classes above. */
export const HOSTILE_PROGRAMS: readonly HostileProgram[] = [
  ...GROWTH,
  ...LOOPING_ARRAY_METHODS.flatMap(([method, args]) => [liar("array-like", method, args), liar("proxy", method, args)]),
  ...SEARCH,
  ...REGEX,
  PARSE,
  SORT,
];

/**
 * A program of about a megabyte that takes a parser seconds: `let` of ~170,000 names, then an
 * async arrow that spins (see test/hardening-host.test.ts). On the default host it is read in the
 * sandbox process, not on the runtime's event loop.
 */
export function craftedMegabyteProgram(): string {
  const names = Array.from({ length: 170_000 }, (_, index) => `a${index.toString(36)}`).join(",");
  return `let ${names};\nasync () => { for (;;) {} }`;
}

/** What runs after each hostile program: the runtime must still complete it. */
export const BENIGN_PROGRAM = "async () => 6 * 7";
