import type { PassRequest } from "./executor.js";
import { mathRandomSeed } from "./keyed-random.js";
import { DEFAULT_SANDBOX_LIMITS, MAX_INTL_OBJECTS, MAX_READ_CHARS, type SandboxLimits } from "./sandbox-limits.js";
import type { SandboxConfig } from "./sandbox-setup.js";

/** Wall-clock limit of one pass when neither the executor nor the request sets one. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Memory limit of one pass when neither the executor nor the request sets one. */
export const DEFAULT_MEMORY_MB = 128;

/** An executor's defaults, used where a pass's request sets none. */
export interface PassDefaults extends SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
}

/** The limits an executor's options may set; each falls back to its default. */
export type PassDefaultOptions = Partial<PassDefaults>;

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

/** The request's part the sandbox needs, as plain data (the request itself holds functions). */
export function sandboxConfig(request: PassRequest, defaults: PassDefaults): SandboxConfig {
  const { maxLogLines, maxLogLineChars, maxLogChars, maxMessageChars } = defaults;
  return {
    connectors: Object.fromEntries(Object.entries(request.connectors).map(([name, methods]) => [name, [...methods]])),
    services: [...(request.services ?? [])],
    replay: [...(request.replay ?? [])],
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
}
