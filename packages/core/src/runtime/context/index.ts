// What every operation runs with: the checked options, the runtime context, the executor chosen, the admission of passes.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export type { PassesHere, PassHere, PassLoad } from "./admission.js";
export { createRuntimeContext, type RuntimeContext } from "./context.js";
export { type CodemodeRuntimeOptions, DEFAULTS } from "./options.js";
