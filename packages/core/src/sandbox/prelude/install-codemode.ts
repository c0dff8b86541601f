import type { SeqCounter } from "./install-connectors.js";
import type { SandboxBridge } from "./sandbox-bridge.js";
import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { ValueCodec } from "./value-codec.js";

/** Asks the host for a `codemode.*` service; `seq` when the service is recorded like a step (fetch). */
export type ServiceCall = (name: string, input: unknown, seq?: number) => Promise<unknown>;

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Installs the frozen `codemode` global: `step` (takes a seq, runs `fn` here and
 * records its value; on replay skips `fn` and moves the seq counter past the calls `fn` made), the
 * host services the pass offers (`search`, `describe`, … take no seq) and `run`, which compiles a
 * snippet's body here so its calls join this execution's log. Returns the service call for fetch.
 */
export function installCodemode(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  services: string[],
  codec: ValueCodec,
  bridge: SandboxBridge,
  seqs: SeqCounter,
  describeThrown: (error: unknown) => string,
): ServiceCall {
  "use strict";
  const { ObjectFreeze, ObjectCreate, ObjectDefineProperty, ObjectGetPrototypeOf, PromiseReject } = intrinsics;
  const { ErrorCtor, TypeErrorCtor, RangeErrorCtor, StringCtor } = intrinsics;
  const { send, plain, decodeText } = bridge;

  async function step(name: unknown, fn: unknown): Promise<unknown> {
    if (typeof name !== "string" || name === "")
      throw new TypeErrorCtor("codemode.step(name, fn): name must be a non-empty string");
    if (typeof fn !== "function") throw new TypeErrorCtor("codemode.step(name, fn): fn must be a function");
    const seq = seqs.take();
    // A name is kept as the step's identity: it must fit like a value, and is never copied if not.
    const longName = bridge.tooLarge(seq, "the name of a codemode.step", name);
    if (longName) return longName;
    const entry = seqs.recorded(seq);
    if (entry && entry.kind === "step" && entry.name === name) {
      if (typeof entry.seqAfter === "number") seqs.skipTo(entry.seqAfter);
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
        return bridge.invalid(seq, error);
      }
      const oversized = bridge.tooLarge(
        seq,
        name.length <= 200 ? `the result of codemode.step("${name}")` : "the result of a codemode.step",
        valueText,
      );
      if (oversized) return oversized;
    } catch (error) {
      errorMessage = describeThrown(error);
    }
    const request: Record<string, unknown> = plain({ type: "step", seq, name, seqAfter: seqs.peek() });
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
    if (seq !== undefined) {
      const oversized = bridge.tooLarge(seq, `the request of ${name}`, argsText);
      if (oversized) return oversized;
    } else if (argsText.length > bridge.maxValueChars) {
      return PromiseReject(
        new RangeErrorCtor(
          `codemode.${name}: the input is ${argsText.length} characters once serialized, over the ${bridge.maxValueChars} limit`,
        ),
      );
    }
    const request: Record<string, unknown> = plain({ type: "service", name, args: argsText });
    if (seq !== undefined) request.seq = seq;
    return send(request, true);
  }

  const codemode: Record<string, unknown> = ObjectCreate(null);
  codemode.step = step;
  for (let index = 0; index < services.length; index++) {
    const name = services[index]!;
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
    const AsyncFunctionCtor = ObjectGetPrototypeOf(async function () {}).constructor as new (
      parameter: string,
      body: string,
    ) => (input: unknown) => Promise<unknown>;
    codemode.run = async function run(name: unknown, input?: unknown): Promise<unknown> {
      const answer = (await service("run", name)) as { body?: unknown; error?: unknown } | undefined;
      if (!answer || typeof answer.body !== "string")
        return {
          error: typeof answer?.error === "string" ? answer.error : `snippet ${StringCtor(name)} could not be run`,
        };
      return new AsyncFunctionCtor("input", `\n${answer.body}\n`)(input);
    };
  }
  ObjectDefineProperty(global, "codemode", {
    value: ObjectFreeze(codemode),
    enumerable: true,
    configurable: false,
    writable: false,
  });
  return service;
}

/**
 * Runs INSIDE the sandbox: installs `fetch` (with `allowNetwork`). R-SB-5: the host fetches and
 * records the response like a step, under the seq taken here; replays get the record. The
 * response is a frozen, Response-like object whose body is already text.
 */
export function installFetch(
  intrinsics: SandboxIntrinsics,
  global: Record<string, unknown>,
  service: ServiceCall,
  seqs: SeqCounter,
  plain: (fields: Record<string, unknown>) => Record<string, unknown>,
): void {
  "use strict";
  const { ObjectFreeze, ObjectDefineProperty, JSONParse, StringCtor } = intrinsics;

  ObjectDefineProperty(global, "fetch", {
    value: async function fetch(input: unknown, init?: unknown) {
      // R-SB-5: the host fetches and records the response like a step; replays get the record.
      const seq = seqs.take();
      const options = (init ?? {}) as { method?: unknown; headers?: unknown; body?: unknown };
      const request = plain({
        input: StringCtor(input),
        init: plain({
          method: options.method === undefined ? "GET" : StringCtor(options.method),
          headers: options.headers === undefined ? plain({}) : options.headers,
          body: options.body === undefined || options.body === null ? null : options.body,
        }),
      });
      const response = (await service("fetch", request, seq)) as {
        url: string;
        status: number;
        statusText: string;
        headers: Record<string, string>;
        body: string;
      };
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
