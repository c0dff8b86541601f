import { type Context, createContext, runInContext } from "node:vm";
import { captureSandboxIntrinsics, type SandboxIntrinsics } from "./sandbox-intrinsics.js";
import { loadValueCodec, type ValueCodec } from "./value-codec.js";

/** A fresh realm in which the prelude's parts are loaded from their source text, as prelude.ts injects them. */
export interface PartRealm {
  context: Context;
  /** The realm's `globalThis`. */
  global: Record<string, unknown>;
  /** `part` evaluated from its source text in the realm. */
  load<Part>(part: Part): Part;
  /** The realm's built-ins, captured as the prelude captures them first. */
  intrinsics: SandboxIntrinsics;
  /** The codec composed in the realm from its pieces' source text. */
  codec: ValueCodec;
  /** Runs `expression` in the realm. */
  read(expression: string): unknown;
}

/**
 * For the tests of the prelude's parts: a fresh `node:vm` realm with the intrinsics and the codec
 * already loaded in it, as the prelude loads them before any installer.
 *
 * @example
 * const realm = partRealm();
 * realm.load(installClock)(realm.intrinsics, realm.global, 0);
 * realm.read("Date.now()"); // 0
 */
export function partRealm(): PartRealm {
  const context = createContext();
  const load = <Part>(part: Part): Part => runInContext(`(${String(part)})`, context) as Part;
  return {
    context,
    global: runInContext("globalThis", context) as Record<string, unknown>,
    load,
    intrinsics: load(captureSandboxIntrinsics)(),
    codec: loadValueCodec(load),
    read: (expression) => runInContext(expression, context),
  };
}
