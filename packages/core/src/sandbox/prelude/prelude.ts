import { installConcatGuard, installFlatGuard } from "./install-array-copy-guards.js";
import { createArrayGuardTools, installArrayGuard, installProxyRegistry } from "./install-array-guard.js";
import { installBufferGuards } from "./install-buffer-guards.js";
import { installClock } from "./install-clock.js";
import { installCodemode, installFetch } from "./install-codemode.js";
import { installConnectors } from "./install-connectors.js";
import { createFormatter, installConsole } from "./install-console.js";
import { installIntlGuard } from "./install-intl-guard.js";
import { installRandom } from "./install-random.js";
import { installStart } from "./install-start.js";
import {
  createStringGuardTools,
  createTwoWaySearch,
  installStringReplaceGuard,
  installStringSearchGuard,
} from "./install-string-guard.js";
import { createUtcDates, createUtcTimeZone } from "./install-time-zone.js";
import { installTimers } from "./install-timers.js";
import { createSandboxBridge } from "./sandbox-bridge.js";
import { captureSandboxIntrinsics } from "./sandbox-intrinsics.js";
import { type SandboxParts, sandboxPrepare, sandboxSetup } from "./sandbox-setup.js";
import { composeValueCodec } from "./value-codec.js";
import { createBase64 } from "./value-codec-base64.js";
import { createDecoder } from "./value-codec-decoder.js";
import { createEncoder } from "./value-codec-encoder.js";
import { captureCodecIntrinsics } from "./value-codec-intrinsics.js";

const PARTS: SandboxParts = {
  captureSandboxIntrinsics,
  captureCodecIntrinsics,
  createBase64,
  createEncoder,
  createDecoder,
  composeValueCodec,
  createFormatter,
  createSandboxBridge,
  installConnectors,
  installCodemode,
  installFetch,
  installConsole,
  installTimers,
  installClock,
  createUtcTimeZone,
  createUtcDates,
  installRandom,
  installBufferGuards,
  installProxyRegistry,
  createArrayGuardTools,
  installArrayGuard,
  installConcatGuard,
  installFlatGuard,
  createTwoWaySearch,
  createStringGuardTools,
  installStringSearchGuard,
  installStringReplaceGuard,
  installIntlGuard,
  installStart,
};

/**
 * Source text run in every fresh context before the model's code. Evaluating it prepares the
 * context (`sandboxPrepare`: built-ins captured and guarded, which no pass changes) and gives a
 * function that takes the pass's host callbacks and config and returns the deliver function: a
 * context made ahead of its pass has the first half done by then.
 *
 * Every piece is an ordinary, type-checked function of this package that references nothing
 * outside itself; their compiled text is what runs in the sandbox, so host and sandbox share one
 * codec. They live in the closure of this expression: nothing of them is on a global. Each is
 * wrapped in parentheses so that V8 compiles it eagerly and the code cache keeps it: every part
 * runs during setup, and compiling them lazily there cost about 0.4 ms per isolate.
 */
export const PRELUDE_SOURCE = `(function () {
  "use strict";
  const parts = {
${Object.entries(PARTS)
  .map(([name, part]) => `    ${name}: (${part.toString()}),`)
  .join("\n")}
  };
  const sandboxPrepare = (${sandboxPrepare.toString()});
  const sandboxSetup = (${sandboxSetup.toString()});
  const prepared = sandboxPrepare(parts);
  return function setup(submit, log, randomBytes, finish, configText) {
    return sandboxSetup(parts, prepared, submit, log, randomBytes, finish, configText);
  };
})()`;
