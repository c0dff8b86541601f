import type { SandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { ValueCodec } from "./value-codec.js";

/** The sandbox's end of the bridge (see docs/decisions.md, "Sandbox bridge"). */
export interface SandboxBridge {
  /**
   * Sends a request to the host as JSON text and resolves with its reply: decoded wire text
   * when `decode`, the raw text otherwise. A host error rejects with an `Error` of its message.
   */
  send(request: Record<string, unknown>, decode: boolean): Promise<unknown>;
  /**
   * What the host calls to settle request `id`: kind 0 is a value's text, kind 1 an error message,
   * kind 2 a denial (R-AP-9): an error named `ApprovalDenied`, delivered as the wire text of
   * `{ message, seq, call, args, by, reason }` (those fields are set on it), or as its message alone.
   */
  deliver(id: number, kind: number, text: string): void;
  /** The text a denial this bridge delivered carried; undefined for anything else (a program cannot make one). */
  denialText(error: unknown): string | undefined;
  /** Tells the host a value could not be encoded (it halts the pass); the program waits forever. */
  invalid(seq: number | undefined, error: unknown): Promise<never>;
  /**
   * The wire text of a value to be kept, when it is longer than the host accepts: the host is
   * told its size instead (it halts the pass with VALUE_TOO_LARGE) and the program waits forever.
   * Undefined when `text` fits.
   */
  tooLarge(seq: number, what: string, text: string): Promise<never> | undefined;
  /** Longest wire text of a value the host accepts. */
  maxValueChars: number;
  /** A null-prototype copy: a `toJSON` or setters the program put on Object.prototype cannot change it. */
  plain(fields: Record<string, unknown>): Record<string, unknown>;
  /** Wire text to a value; "" is `undefined`. */
  decodeText(text: string): unknown;
}

/**
 * Runs INSIDE the sandbox (injected as source text, see prelude.ts): it may reference nothing
 * outside itself. Holds the requests waiting for the host's reply, keyed by request id; `submit`
 * (the host callback) stays in this closure, never on a global.
 */
export function createSandboxBridge(
  intrinsics: SandboxIntrinsics,
  codec: ValueCodec,
  submit: (id: number, text: string, args: string | undefined) => void,
  messageOf: (error: unknown, fallback: string) => string,
  maxValueChars: number,
): SandboxBridge {
  "use strict";
  const { JSONStringify, ReflectApply, ObjectCreate, ObjectKeys, PromiseCtor, ErrorCtor, ObjectDefineProperty } =
    intrinsics;
  const { MapCtor, MapGet, MapSet, MapDelete } = intrinsics;
  /**
   * The denials delivered in this pass, with the text they were delivered with: a program's own
   * error named ApprovalDenied is not one, and one whose message it rewrote still reports who denied it.
   */
  const denials = new MapCtor<unknown, string>();

  type Waiter = { resolve: (value: unknown) => void; reject: (error: unknown) => void; decode: boolean };
  const waiting = new MapCtor<number, Waiter>();
  let nextRequestId = 1;
  const never = new PromiseCtor<never>(() => {});

  function decodeText(text: string): unknown {
    return text === "" ? undefined : codec.decode(text);
  }

  function plain(fields: Record<string, unknown>): Record<string, unknown> {
    const copy: Record<string, unknown> = ObjectCreate(null);
    const keys = ObjectKeys(fields);
    for (let index = 0; index < keys.length; index++) copy[keys[index]!] = fields[keys[index]!];
    return copy;
  }

  // Arguments are wire text already: they cross beside the request, not quoted inside its JSON.
  function send(request: Record<string, unknown>, decode: boolean): Promise<unknown> {
    const id = nextRequestId++;
    const fields = plain(request);
    const args = fields.args;
    let text: string;
    if (typeof args === "string") {
      delete fields.args;
      text = JSONStringify(fields);
    } else {
      text = JSONStringify(fields);
    }
    return new PromiseCtor((resolve, reject) => {
      ReflectApply(MapSet, waiting, [id, { resolve, reject, decode }]);
      submit(id, text, typeof args === "string" ? args : undefined);
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
    } else if (kind === 2) {
      waiter.reject(denialError(text));
    } else {
      waiter.reject(new ErrorCtor(text));
    }
  }

  /**
   * The `ApprovalDenied` error of a denial delivered as `{ message, seq, call, args, by, reason }`
   * (or as its message alone): the message, and the facts as fields the program can read.
   */
  function denialError(text: string): Error {
    let facts: unknown;
    try {
      facts = decodeText(text);
    } catch {
      facts = undefined;
    }
    const known =
      facts !== null && typeof facts === "object" && typeof (facts as { message?: unknown }).message === "string";
    const message = known ? (facts as { message: string }).message : text;
    const denial = new ErrorCtor(message);
    ObjectDefineProperty(denial, "name", { value: "ApprovalDenied", writable: true, configurable: true });
    if (known) {
      const fields = ObjectKeys(facts as object);
      for (let index = 0; index < fields.length; index++) {
        const field = fields[index]!;
        if (field === "message") continue;
        ObjectDefineProperty(denial, field, {
          value: (facts as Record<string, unknown>)[field],
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
    }
    ReflectApply(MapSet, denials, [denial, message]);
    return denial;
  }

  function denialText(error: unknown): string | undefined {
    const text = ReflectApply(MapGet, denials, [error]);
    return typeof text === "string" ? text : undefined;
  }

  function invalid(seq: number | undefined, error: unknown): Promise<never> {
    send({ type: "invalid", seq, message: messageOf(error, "a value could not be encoded") }, false);
    return never;
  }

  function tooLarge(seq: number, what: string, text: string): Promise<never> | undefined {
    if (text.length <= maxValueChars) return undefined;
    send({ type: "invalid", seq, message: what, size: text.length }, false);
    return never;
  }

  return { send, deliver, denialText, invalid, tooLarge, maxValueChars, plain, decodeText };
}
