import type { ValueCodec } from "./value-codec.js";

/** What the host passes to the setup function inside the sandbox, as JSON text. */
export interface SandboxConfig {
  connectors: Record<string, string[]>;
  services: string[];
  replay: unknown[];
  deterministic: { seed: string; clockMs: number } | null;
  allowNetwork: boolean;
}

/** Reply kinds of the deliver function the setup returns (the sandbox side uses the literals). */
export const DELIVER_VALUE = 0;
export const DELIVER_ERROR = 1;

/** Prefixes of the text `__codemode_start` resolves to. */
export const RESULT_RETURNED = "R";
export const RESULT_THREW = "T";
export const RESULT_INVALID = "N";

/** Service handled by the executor itself: a pass-scoped timer. */
export const TIMER_SERVICE = "__timer";

/**
 * Runs INSIDE the sandbox, before any model code, from its source text (see prelude.ts): it may
 * reference nothing outside itself. It installs the globals of R-SB-1 (connectors, `codemode`,
 * `console`, replay-stable `Date`/`Math.random`/`crypto`), keeps the host callbacks in its closure
 * (never on a global), numbers calls at the call site (R-RP-1) and answers recorded calls from
 * the preloaded log without a bridge trip (R-ST-2). The host checks everything it is sent: this
 * code makes the sandbox pleasant and fast, not safe — the isolate boundary does that.
 */
export function sandboxSetup(
  createValueCodec: () => ValueCodec,
  submit: (id: number, text: string) => void,
  log: (level: string, text: string) => void,
  randomBytes: (count: number) => string,
  configText: string,
): (id: number, kind: number, text: string) => void {
  "use strict";
  const global = globalThis as Record<string, unknown>;
  const codec = createValueCodec();
  const JSONParse = JSON.parse;
  const JSONStringify = JSON.stringify;
  const ReflectApply = Reflect.apply;
  const ObjectFreeze = Object.freeze;
  const ObjectCreate = Object.create;
  const ObjectKeys = Object.keys;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const PromiseCtor = Promise;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const PromiseReject = Promise.reject.bind(Promise);
  const PromiseThen = Promise.prototype.then;
  const MapCtor = Map;
  const MapGet = Map.prototype.get;
  const MapSet = Map.prototype.set;
  const MapDelete = Map.prototype.delete;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;
  const ReflectConstruct = Reflect.construct;
  const OriginalDate = Date;
  const MathFloor = Math.floor;
  const Uint8ArrayCtor = Uint8Array;
  const typedArrayTagGetter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag)!.get!;

  const config = JSONParse(configText) as {
    connectors: Record<string, string[]>;
    services: string[];
    replay: Array<{ kind: string; seq: number; connector?: string; method?: string; name?: string; args?: string; canonicalArgs?: string; seqAfter?: number; outcome: string; text: string }>;
    deterministic: { seed: string; clockMs: number } | null;
    allowNetwork: boolean;
  };

  type Waiter = { resolve: (value: unknown) => void; reject: (error: unknown) => void; decode: boolean };
  const waiting = new MapCtor<number, Waiter>();
  const replay = new MapCtor<number, (typeof config.replay)[number]>();
  for (let index = 0; index < config.replay.length; index++) {
    const entry = config.replay[index]!;
    ReflectApply(MapSet, replay, [entry.seq, entry]);
  }
  let nextRequestId = 1;
  let nextSeq = 0;
  const never = new PromiseCtor<never>(() => {});

  function decodeText(text: string): unknown {
    return text === "" ? undefined : codec.decode(text);
  }

  /** A null-prototype copy: a `toJSON` or setters the program put on Object.prototype cannot change it. */
  function plain(fields: Record<string, unknown>): Record<string, unknown> {
    const copy: Record<string, unknown> = ObjectCreate(null);
    const keys = ObjectKeys(fields);
    for (let index = 0; index < keys.length; index++) copy[keys[index]!] = fields[keys[index]!];
    return copy;
  }

  /** Text of a thrown value's message that never runs into a second throw (getters, Proxy traps). */
  function messageOf(error: unknown, fallback: string): string {
    try {
      if (error instanceof ErrorCtor) return StringCtor(error.message);
    } catch {
      // Fall through to the fallback.
    }
    return fallback;
  }

  function send(request: Record<string, unknown>, decode: boolean): Promise<unknown> {
    const id = nextRequestId++;
    const text = JSONStringify(plain(request));
    return new PromiseCtor((resolve, reject) => {
      ReflectApply(MapSet, waiting, [id, { resolve, reject, decode }]);
      submit(id, text);
    });
  }

  function deliver(id: number, kind: number, text: string): void {
    const waiter = ReflectApply(MapGet, waiting, [id]) as Waiter | undefined;
    if (!waiter) return;
    ReflectApply(MapDelete, waiting, [id]);
    if (kind === 0) {
      let value: unknown;
      try {
        value = waiter.decode ? decodeText(text) : text;
      } catch (error) {
        waiter.reject(error);
        return;
      }
      waiter.resolve(value);
    } else {
      waiter.reject(new ErrorCtor(text));
    }
  }

  function invalid(seq: number | undefined, error: unknown): Promise<never> {
    send({ type: "invalid", seq, message: messageOf(error, "a value could not be encoded") }, false);
    return never;
  }

  // ---- connectors ---------------------------------------------------------------------------
  function callConnector(connector: string, method: string, argumentCount: number, args: unknown): Promise<unknown> {
    if (argumentCount > 1) {
      return PromiseReject(new TypeErrorCtor(`${connector}.${method} takes one argument (an object)`));
    }
    const seq = nextSeq++;
    let argsText: string;
    try {
      argsText = codec.encode(args) ?? "";
    } catch (error) {
      return invalid(seq, error);
    }
    const entry = ReflectApply(MapGet, replay, [seq]) as (typeof config.replay)[number] | undefined;
    if (entry && entry.kind === "call" && entry.connector === connector && entry.method === method) {
      // The same text as recorded is the common case; otherwise compare key-order-insensitive
      // text, computed from the text already encoded so argument getters never run twice.
      let matches = entry.args !== undefined && entry.args === argsText;
      if (!matches) {
        try {
          const canonicalArgs = argsText === "" ? "" : codec.canonical(argsText);
          const recorded = entry.canonicalArgs ?? (entry.args === undefined || entry.args === "" ? "" : codec.canonical(entry.args));
          matches = canonicalArgs === recorded;
        } catch (error) {
          return invalid(seq, error);
        }
      }
      if (matches) {
        if (entry.outcome === "value") {
          try {
            return PromiseResolve(decodeText(entry.text));
          } catch (error) {
            return PromiseReject(error);
          }
        }
        return PromiseReject(new ErrorCtor(entry.text));
      }
    }
    return send({ type: "call", seq, connector, method, args: argsText }, true);
  }

  for (const connector in config.connectors) {
    const methods: Record<string, unknown> = ObjectCreate(null);
    const names = config.connectors[connector]!;
    for (let index = 0; index < names.length; index++) {
      const method = names[index]!;
      methods[method] = {
        [method](args?: unknown) {
          return callConnector(connector, method, arguments.length, args);
        },
      }[method];
    }
    ObjectDefineProperty(global, connector, { value: ObjectFreeze(methods), enumerable: true, configurable: false, writable: false });
  }

  // ---- codemode ------------------------------------------------------------------------------
  async function step(name: unknown, fn: unknown): Promise<unknown> {
    if (typeof name !== "string" || name === "") throw new TypeErrorCtor("codemode.step(name, fn): name must be a non-empty string");
    if (typeof fn !== "function") throw new TypeErrorCtor("codemode.step(name, fn): fn must be a function");
    const seq = nextSeq++;
    const entry = ReflectApply(MapGet, replay, [seq]) as (typeof config.replay)[number] | undefined;
    if (entry && entry.kind === "step" && entry.name === name) {
      if (typeof entry.seqAfter === "number" && entry.seqAfter > nextSeq) nextSeq = entry.seqAfter;
      if (entry.outcome === "value") return decodeText(entry.text);
      throw new ErrorCtor(entry.text);
    }
    let valueText: string | undefined;
    let errorMessage: string | undefined;
    try {
      const value = await (fn as () => unknown)();
      try {
        valueText = codec.encode(value) ?? "";
      } catch (error) {
        return invalid(seq, error);
      }
    } catch (error) {
      errorMessage = describeThrown(error);
    }
    const request: Record<string, unknown> = plain({ type: "step", seq, name, seqAfter: nextSeq });
    if (errorMessage === undefined) request.value = valueText;
    else request.error = errorMessage;
    await send(request, false);
    if (errorMessage !== undefined) throw new ErrorCtor(errorMessage);
    // Decode what was recorded, so the first pass sees exactly what replays will see.
    return decodeText(valueText!);
  }

  function service(name: string, input: unknown, seq?: number): Promise<unknown> {
    let argsText: string;
    try {
      argsText = codec.encode(input) ?? "";
    } catch (error) {
      return PromiseReject(error);
    }
    const request: Record<string, unknown> = plain({ type: "service", name, args: argsText });
    if (seq !== undefined) request.seq = seq;
    return send(request, true);
  }

  const codemode: Record<string, unknown> = ObjectCreate(null);
  codemode.step = step;
  for (let index = 0; index < config.services.length; index++) {
    const name = config.services[index]!;
    if (name === "step" || name === "fetch") continue;
    codemode[name] = {
      [name](...args: unknown[]) {
        return service(name, args.length <= 1 ? args[0] : args);
      },
    }[name];
  }
  if (codemode.run) {
    // R-SN-2: the host answers with the snippet's body (or { error }); it runs here, in this
    // pass, so its calls take the next seqs and join this execution's log.
    const AsyncFunctionCtor = ObjectGetPrototypeOf(async function () {}).constructor as new (parameter: string, body: string) => (input: unknown) => Promise<unknown>;
    codemode.run = async function run(name: unknown, input?: unknown): Promise<unknown> {
      const answer = (await service("run", name)) as { body?: unknown; error?: unknown } | undefined;
      if (!answer || typeof answer.body !== "string") return { error: typeof answer?.error === "string" ? answer.error : `snippet ${StringCtor(name)} could not be run` };
      return new AsyncFunctionCtor("input", `\n${answer.body}\n`)(input);
    };
  }
  ObjectDefineProperty(global, "codemode", { value: ObjectFreeze(codemode), enumerable: true, configurable: false, writable: false });

  if (config.allowNetwork) {
    ObjectDefineProperty(global, "fetch", {
      value: async function fetch(input: unknown, init?: unknown) {
        // R-SB-5: the host fetches and records the response like a step; replays get the record.
        const seq = nextSeq++;
        const options = (init ?? {}) as { method?: unknown; headers?: unknown; body?: unknown };
        const request = plain({
          input: StringCtor(input),
          init: plain({
            method: options.method === undefined ? "GET" : StringCtor(options.method),
            headers: options.headers === undefined ? plain({}) : options.headers,
            body: options.body === undefined || options.body === null ? null : options.body,
          }),
        });
        const response = (await service("fetch", request, seq)) as { url: string; status: number; statusText: string; headers: Record<string, string>; body: string };
        const headers = response.headers;
        return ObjectFreeze({
          url: response.url,
          status: response.status,
          statusText: response.statusText,
          ok: response.status >= 200 && response.status < 300,
          headers: ObjectFreeze({
            get: (name: unknown) => {
              const value = headers[StringCtor(name).toLowerCase()];
              return value === undefined ? null : value;
            },
            has: (name: unknown) => headers[StringCtor(name).toLowerCase()] !== undefined,
            entries: () => Object.entries(headers),
          }),
          text: async () => response.body,
          json: async () => JSONParse(response.body),
        });
      },
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }

  // ---- console -------------------------------------------------------------------------------
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

  // ---- timers (they die with the pass) -------------------------------------------------------
  let nextTimerId = 1;
  const cancelled = new MapCtor<number, boolean>();
  function schedule(callback: unknown, delay: unknown, args: unknown[], repeat: boolean): number {
    if (typeof callback !== "function") throw new TypeErrorCtor("the timer callback must be a function");
    const timerId = nextTimerId++;
    const ms = typeof delay === "number" && delay > 0 ? MathFloor(delay) : 0;
    const arm = (): void => {
      ReflectApply(PromiseThen, send({ type: "service", name: "__timer", args: StringCtor(ms) }, false), [
        () => {
          if (ReflectApply(MapGet, cancelled, [timerId])) return;
          if (repeat) arm();
          ReflectApply(callback, undefined, args);
        },
      ]);
    };
    arm();
    return timerId;
  }
  function cancel(timerId: unknown): void {
    if (typeof timerId === "number") ReflectApply(MapSet, cancelled, [timerId, true]);
  }
  global.setTimeout = (callback: unknown, delay?: unknown, ...args: unknown[]) => schedule(callback, delay, args, false);
  global.setInterval = (callback: unknown, delay?: unknown, ...args: unknown[]) => schedule(callback, delay, args, true);
  global.clearTimeout = cancel;
  global.clearInterval = cancel;
  global.queueMicrotask = (callback: unknown) => {
    if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask needs a function");
    ReflectApply(PromiseThen, PromiseResolve(), [() => ReflectApply(callback, undefined, [])]);
  };

  // ---- replay-stable clock and randomness (R-SB-6) -------------------------------------------
  let nextRandomUint32: () => number;
  if (config.deterministic) {
    const clockMs = config.deterministic.clockMs;
    // cyrb128 → four 32-bit words seeding sfc32: small, fast, good enough for non-crypto use.
    const seedText = config.deterministic.seed;
    let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
    for (let index = 0; index < seedText.length; index++) {
      const k = seedText.charCodeAt(index);
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
    }
    h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
    h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
    h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
    h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
    let a = (h1 ^ h2 ^ h3 ^ h4) >>> 0, b = (h2 ^ h1) >>> 0, c = (h3 ^ h1) >>> 0, d = (h4 ^ h1) >>> 0;
    nextRandomUint32 = () => {
      a |= 0; b |= 0; c |= 0; d |= 0;
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return t >>> 0;
    };
    for (let index = 0; index < 15; index++) nextRandomUint32();

    // The clock stands still at the execution's start: a step's fn is skipped on replay, so a
    // moving clock would read differently on each pass.
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
    ObjectDefineProperty(Math, "random", { value: function random() { return nextRandomUint32() / 4294967296; }, writable: true, configurable: true });
  } else {
    let pool: Uint8Array = new Uint8ArrayCtor(0);
    let poolIndex = 0;
    nextRandomUint32 = () => {
      if (poolIndex + 4 > pool.length) {
        pool = codec.decode(`{"$cm":"bytes","v":"${randomBytes(1024)}"}`) as Uint8Array;
        poolIndex = 0;
      }
      const value = ((pool[poolIndex]! << 24) | (pool[poolIndex + 1]! << 16) | (pool[poolIndex + 2]! << 8) | pool[poolIndex + 3]!) >>> 0;
      poolIndex += 4;
      return value;
    };
  }

  const crypto: Record<string, unknown> = ObjectCreate(null);
  crypto.getRandomValues = function getRandomValues<T>(array: T): T {
    const tag = ReflectApply(typedArrayTagGetter, array, []) as string | undefined;
    if (tag === undefined || tag === "Float32Array" || tag === "Float64Array" || tag === "Float16Array") {
      throw new TypeErrorCtor("crypto.getRandomValues needs an integer typed array");
    }
    const view = array as unknown as { buffer: ArrayBuffer; byteOffset: number; byteLength: number };
    if (view.byteLength > 65536) throw new RangeError("crypto.getRandomValues: at most 65536 bytes at a time");
    const bytes = new Uint8ArrayCtor(view.buffer, view.byteOffset, view.byteLength);
    for (let index = 0; index < bytes.length; index += 4) {
      const word = nextRandomUint32();
      for (let offset = 0; offset < 4 && index + offset < bytes.length; offset++) bytes[index + offset] = (word >>> (offset * 8)) & 255;
    }
    return array;
  };
  crypto.randomUUID = function randomUUID(): string {
    const bytes = new Uint8ArrayCtor(16);
    (crypto.getRandomValues as (array: Uint8Array) => Uint8Array)(bytes);
    bytes[6] = (bytes[6]! & 0x0f) | 0x40;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    let hex = "";
    for (let index = 0; index < 16; index++) {
      hex += (bytes[index]! < 16 ? "0" : "") + bytes[index]!.toString(16);
      if (index === 3 || index === 5 || index === 7 || index === 9) hex += "-";
    }
    return hex;
  };
  ObjectDefineProperty(global, "crypto", { value: ObjectFreeze(crypto), enumerable: false, configurable: true, writable: true });

  // Not ECMAScript, and its memory lives outside the heap limit.
  delete global.WebAssembly;

  // ---- the program ---------------------------------------------------------------------------
  ObjectDefineProperty(global, "__codemode_start", {
    configurable: true,
    value: function start(main: () => unknown): Promise<string> {
      delete global.__codemode_start;
      return new PromiseCtor<string>((resolve) => {
        const returned = (value: unknown) => {
          let text: string;
          try {
            text = codec.encode(value) ?? "";
          } catch (error) {
            resolve("N" + messageOf(error, "the result could not be encoded"));
            return;
          }
          resolve("R" + text);
        };
        const threw = (error: unknown) => {
          let line: unknown = null;
          let column: unknown = null;
          try {
            const stack = error instanceof ErrorCtor ? StringCtor(error.stack) : "";
            const match = /codemode\.js:(\d+):(\d+)/.exec(stack);
            if (match) {
              line = +match[1]!;
              column = +match[2]!;
            }
          } catch {
            // No position then.
          }
          resolve("T" + JSONStringify(plain({ message: describeThrown(error), line, column })));
        };
        try {
          ReflectApply(PromiseThen, PromiseResolve(main()), [returned, threw]);
        } catch (error) {
          threw(error);
        }
      });
    },
  });
  return deliver;
}
