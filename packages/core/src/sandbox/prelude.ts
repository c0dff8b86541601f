import { sandboxSetup } from "./sandbox-setup.js";
import { createValueCodec } from "./value-codec.js";

/**
 * Source text run in every fresh context before the model's code. It evaluates to a function
 * that takes the host callbacks and the config and returns the deliver function.
 *
 * Both pieces are ordinary, type-checked functions of this package; their compiled text is what
 * runs in the sandbox, so host and sandbox share one codec.
 */
export const PRELUDE_SOURCE = `(function () {
  "use strict";
  const createValueCodec = (${createValueCodec.toString()});
  const sandboxSetup = (${sandboxSetup.toString()});
  return function setup(submit, log, randomBytes, configText) {
    return sandboxSetup(createValueCodec, submit, log, randomBytes, configText);
  };
})()`;
