// The runtime handle: `createCodemodeRuntime` and the `CodemodeRuntime` interface.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export { createCodemodeRuntime } from "./create-runtime.js";
export type { CodemodeRuntime } from "./interface.js";
