import type { SandboxLimits } from "../sandbox-limits.js";
import type { installConcatGuard, installFlatGuard } from "./install-array-copy-guards.js";
import type { createArrayGuardTools, installArrayGuard, installProxyRegistry } from "./install-array-guard.js";
import type { installBufferGuards } from "./install-buffer-guards.js";
import type { installClock } from "./install-clock.js";
import type { installCodemode, installFetch } from "./install-codemode.js";
import type { installConnectors, WireReplayEntry } from "./install-connectors.js";
import type { createFormatter, installConsole } from "./install-console.js";
import type { installIntlGuard } from "./install-intl-guard.js";
import type { installRandom } from "./install-random.js";
import type { installStart } from "./install-start.js";
import type {
  createStringGuardTools,
  createTwoWaySearch,
  installStringReplaceGuard,
  installStringSearchGuard,
} from "./install-string-guard.js";
import type { createUtcDates, createUtcTimeZone } from "./install-time-zone.js";
import type { installTimers } from "./install-timers.js";
import type { createSandboxBridge } from "./sandbox-bridge.js";
import type { captureSandboxIntrinsics } from "./sandbox-intrinsics.js";
import type { composeValueCodec, ValueCodecParts } from "./value-codec.js";

/** What the host passes to the setup function inside the sandbox, as JSON text. */
export interface SandboxConfig {
  connectors: Record<string, string[]>;
  services: string[];
  replay: WireReplayEntry[];
  /** With `keyed`, `seed` seeds only `Math.random`; `crypto` asks the host (see executor.ts). */
  deterministic: { seed: string; clockMs: number; keyed?: boolean } | null;
  allowNetwork: boolean;
  /** Bounds on what the sandbox sends to the host (see sandbox-limits.ts). */
  limits: SandboxLimits & { maxReadChars: number; maxIntlObjects: number };
}

/** Reply kinds of the deliver function the setup returns (the sandbox side uses the literals). */
export const DELIVER_VALUE = 0;
export const DELIVER_ERROR = 1;
export const DELIVER_DENIED = 2;

/** Prefixes of the text `__codemode_start` reports through the host's `finish` callback. */
export const RESULT_RETURNED = "R";
export const RESULT_THREW = "T";
export const RESULT_INVALID = "N";
export const RESULT_DENIED = "D";

/** Service handled by the executor itself: a pass-scoped timer. */
export const TIMER_SERVICE = "__timer";

/**
 * The self-contained pieces the prelude is made of. Each is an ordinary function of this package
 * that references nothing outside itself; prelude.ts injects their source text, so what runs in
 * the sandbox is exactly what is type-checked and unit-tested here.
 */
export interface SandboxParts extends ValueCodecParts {
  captureSandboxIntrinsics: typeof captureSandboxIntrinsics;
  composeValueCodec: typeof composeValueCodec;
  createFormatter: typeof createFormatter;
  createSandboxBridge: typeof createSandboxBridge;
  installConnectors: typeof installConnectors;
  installCodemode: typeof installCodemode;
  installFetch: typeof installFetch;
  installConsole: typeof installConsole;
  installTimers: typeof installTimers;
  installClock: typeof installClock;
  createUtcTimeZone: typeof createUtcTimeZone;
  createUtcDates: typeof createUtcDates;
  installRandom: typeof installRandom;
  installBufferGuards: typeof installBufferGuards;
  installProxyRegistry: typeof installProxyRegistry;
  createArrayGuardTools: typeof createArrayGuardTools;
  installArrayGuard: typeof installArrayGuard;
  installConcatGuard: typeof installConcatGuard;
  installFlatGuard: typeof installFlatGuard;
  createTwoWaySearch: typeof createTwoWaySearch;
  createStringGuardTools: typeof createStringGuardTools;
  installStringSearchGuard: typeof installStringSearchGuard;
  installStringReplaceGuard: typeof installStringReplaceGuard;
  installIntlGuard: typeof installIntlGuard;
  installStart: typeof installStart;
}

/** What `sandboxPrepare` made of a fresh context, for the `sandboxSetup` of the pass that gets it. */
export interface PreparedSandbox {
  intrinsics: ReturnType<typeof captureSandboxIntrinsics>;
  codec: ReturnType<typeof composeValueCodec>;
}

/**
 * Runs INSIDE the sandbox when its context is made, before the pass that will use it is known
 * (see prelude.ts): captures the built-ins while nothing has touched them, then removes and
 * guards the built-ins no program may use as they are. None of it depends on the pass, so a
 * context prepared ahead of need (a warm isolate's next one) has it done before its pass comes.
 */
export function sandboxPrepare(parts: SandboxParts): PreparedSandbox {
  "use strict";
  // First: the built-ins every installer uses, captured while no program has touched them.
  const intrinsics = parts.captureSandboxIntrinsics();
  const global = globalThis as Record<string, unknown>;
  const codec = parts.composeValueCodec(parts);
  // Not ECMAScript, and its memory lives outside the heap limit; so do the things guarded here.
  delete global.WebAssembly;
  // Their callbacks run when V8 schedules them, not when the pass runs: a cleanup callback or an
  // async wait's reaction could run after the pass ended, with no watchdog, in an isolate kept
  // warm for the next pass (docs/security.md). No program needs them.
  delete global.FinalizationRegistry;
  delete (global.Atomics as { waitAsync?: unknown } | undefined)?.waitAsync;
  parts.installBufferGuards(intrinsics, global);
  // After the intrinsics were captured: the prelude's own code keeps the built-ins themselves.
  const arrayGuardTools = parts.createArrayGuardTools(parts.installProxyRegistry());
  parts.installArrayGuard(arrayGuardTools);
  parts.installConcatGuard(arrayGuardTools);
  parts.installFlatGuard(arrayGuardTools);
  // String searches the built-ins would run in native code for longer than a deadline (R-SB-8).
  // V8 searches in linear time and stops at the deadline, but for `lastIndexOf` (naive, and deaf
  // to termination); quickjs-ng searches naively and polls no interrupt in any of them. QuickJS is
  // told by its missing Intl (an engine without one), and pays the wrappers' cost on every call.
  const stringGuardTools = parts.createStringGuardTools(parts.createTwoWaySearch());
  const naiveSearches = typeof (global as { Intl?: unknown }).Intl === "undefined";
  parts.installStringSearchGuard(stringGuardTools, naiveSearches ? undefined : ["lastIndexOf"]);
  if (naiveSearches) parts.installStringReplaceGuard(stringGuardTools);
  return { intrinsics, codec };
}

/**
 * Runs INSIDE the sandbox, before any model code, from its source text (see prelude.ts): it may
 * reference nothing outside itself and `parts`. It installs the globals of R-SB-1 (connectors,
 * `codemode`, `console`, timers, replay-stable `Date`/`Math.random`/`crypto`), keeps the host
 * callbacks in closures (never on a global), numbers calls at the call site (R-RP-1) and answers
 * recorded calls from the preloaded log without a bridge trip (R-ST-2), in a context that
 * `sandboxPrepare` has prepared. The host checks everything it is sent: this code makes the
 * sandbox pleasant and fast, not safe — the isolate boundary does that. Returns the function the
 * host delivers replies through.
 */
export function sandboxSetup(
  parts: SandboxParts,
  prepared: PreparedSandbox,
  submit: (id: number, text: string, args: string | undefined) => void,
  log: (level: string, text: string) => void,
  randomBytes: (count: number) => string,
  finish: (text: string) => void,
  configText: string,
): (id: number, kind: number, text: string) => void {
  "use strict";
  const { intrinsics, codec } = prepared;
  const global = globalThis as Record<string, unknown>;
  const config = JSON.parse(configText) as SandboxConfig;

  const limits = config.limits;
  const formatter = parts.createFormatter(intrinsics, codec, limits);
  const bridge = parts.createSandboxBridge(intrinsics, codec, submit, formatter.messageOf, limits.maxValueChars);
  // Installed in this order, which is the order a program sees the globals in.
  const seqs = parts.installConnectors(intrinsics, global, config.connectors, config.replay, codec, bridge);
  const service = parts.installCodemode(
    intrinsics,
    global,
    config.services,
    codec,
    bridge,
    seqs,
    formatter.describeThrown,
  );
  if (config.allowNetwork) parts.installFetch(intrinsics, global, service, seqs, bridge.plain);
  parts.installConsole(intrinsics, global, formatter.formatValue, log, limits);
  parts.installTimers(intrinsics, global, bridge.send);
  const deterministic = config.deterministic;
  // The sandbox's time zone is UTC: dates on their first use (patching `Date.prototype` up front
  // cost every deterministic pass ~0.5 ms), Intl on its first use (see installIntlGuard).
  const timeZone = deterministic
    ? parts.createUtcTimeZone(intrinsics, deterministic.clockMs, parts.createUtcDates)
    : undefined;
  if (deterministic && timeZone) {
    parts.installClock(intrinsics, global, deterministic.clockMs);
    intrinsics.onFirstRead(global, "Date", timeZone.patchDates);
  }
  parts.installRandom(global, deterministic, codec, randomBytes);
  parts.installIntlGuard(intrinsics, global, limits.maxIntlObjects, timeZone?.patchIntl);
  parts.installStart(
    intrinsics,
    global,
    codec,
    bridge.plain,
    formatter.messageOf,
    formatter.describeThrown,
    finish,
    limits.maxReadChars,
    bridge.denialText,
  );
  return bridge.deliver;
}
