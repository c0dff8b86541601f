import type { PassRequest, ReplayEntry } from "./executor.js";
import type { WireReplayEntry } from "./prelude/install-connectors.js";
import { mathRandomSeed } from "./prelude/keyed-random.js";
import type { SandboxConfig } from "./prelude/sandbox-setup.js";
import { DEFAULT_SANDBOX_LIMITS, MAX_INTL_OBJECTS, MAX_READ_CHARS, type SandboxLimits } from "./sandbox-limits.js";

/** Wall-clock limit of one pass when neither the executor nor the request sets one. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Memory limit of one pass when neither the executor nor the request sets one. */
export const DEFAULT_MEMORY_MB = 128;

/** An executor's defaults, used where a pass's request sets none. */
export interface PassDefaults extends SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
}

/**
 * The limits both executors' options may set; each falls back to its default. What `memoryMb`
 * counts differs by engine: each executor's options say.
 */
export interface PassDefaultOptions {
  /** Wall-clock limit of one pass, including time spent awaiting the host. Default 60 000 ms. */
  timeoutMs?: number;
  /** Memory limit of one pass. Default 128 MB. */
  memoryMb?: number;
  /** Console output kept per pass. Default 1 000 lines of at most 10 000 characters, 1 000 000 characters in all. */
  maxLogLines?: number;
  maxLogLineChars?: number;
  maxLogChars?: number;
  /** Characters kept of an error message that crosses from the sandbox. Default 10 000. */
  maxMessageChars?: number;
  /** Longest wire text of a value sent to be kept, unless a pass sets its own. Default 64 MiB. */
  maxValueChars?: number;
}

/** The executor's defaults from its options (see IsolatedVmExecutorOptions for what each means). */
export function passDefaults(options: PassDefaultOptions): PassDefaults {
  return {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    memoryMb: options.memoryMb ?? DEFAULT_MEMORY_MB,
    maxLogLines: options.maxLogLines ?? DEFAULT_SANDBOX_LIMITS.maxLogLines,
    maxLogLineChars: options.maxLogLineChars ?? DEFAULT_SANDBOX_LIMITS.maxLogLineChars,
    maxLogChars: options.maxLogChars ?? DEFAULT_SANDBOX_LIMITS.maxLogChars,
    maxMessageChars: options.maxMessageChars ?? DEFAULT_SANDBOX_LIMITS.maxMessageChars,
    maxValueChars: options.maxValueChars ?? DEFAULT_SANDBOX_LIMITS.maxValueChars,
  };
}

/** What the sandbox learns of the request's determinism: never a keyed (secret) seed itself. */
function sandboxDeterminism(deterministic: PassRequest["deterministic"]): SandboxConfig["deterministic"] {
  if (!deterministic) return null;
  if (deterministic.keyed)
    return { seed: mathRandomSeed(deterministic.seed), clockMs: deterministic.clockMs, keyed: true };
  return { seed: deterministic.seed, clockMs: deterministic.clockMs };
}

/**
 * The request's part the sandbox needs, as the JSON text its setup parses. The preload is the
 * request's `replay` in its wire form, or `replayText` as a sandbox thread received it (already
 * JSON: a long log crosses the thread as one string, not as thousands of objects to clone).
 */
export function sandboxConfigText(request: PassRequest & { replayText?: string }, defaults: PassDefaults): string {
  const { maxLogLines, maxLogLineChars, maxLogChars, maxMessageChars } = defaults;
  const config: Omit<SandboxConfig, "replay"> = {
    connectors: Object.fromEntries(Object.entries(request.connectors).map(([name, methods]) => [name, [...methods]])),
    services: [...(request.services ?? [])],
    deterministic: sandboxDeterminism(request.deterministic),
    allowNetwork: request.allowNetwork === true,
    limits: {
      maxLogLines,
      maxLogLineChars,
      maxLogChars,
      maxMessageChars,
      maxValueChars: request.maxValueChars ?? defaults.maxValueChars,
      maxReadChars: MAX_READ_CHARS,
      maxIntlObjects: MAX_INTL_OBJECTS,
    },
  };
  const replay = request.replayText ?? replayText(request.replay ?? []);
  // One more member appended to the object's text: `config` is never empty.
  return `${JSON.stringify(config).slice(0, -1)},"replay":${replay}}`;
}

/** The preload's JSON text (see `WireReplayEntry`). */
export function replayText(entries: readonly ReplayEntry[]): string {
  return JSON.stringify(wireReplay(entries));
}

/** The preloaded log as it crosses to the sandbox (see `WireReplayEntry`). */
export function wireReplay(entries: readonly ReplayEntry[]): WireReplayEntry[] {
  return entries.map((entry): WireReplayEntry => {
    const value = entry.outcome === "value" ? 1 : 0;
    if (entry.kind === "step") return [entry.seq, "s", entry.name, entry.seqAfter, value, entry.text];
    return [
      entry.seq,
      "c",
      entry.connector,
      entry.method,
      entry.args ?? null,
      value,
      entry.text,
      entry.canonicalArgs ?? null,
    ];
  });
}
