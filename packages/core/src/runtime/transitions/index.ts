// How an execution's record changes: the named transitions under its lease, the connectors' hooks, failures as data, connectors a run needs.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export { asStorageError, currentCalls, failureOutcome } from "./failure.js";
export { missingConnectors } from "./missing-connectors.js";
export {
  afterTransition,
  complete,
  endCancelled,
  endDenied,
  expire,
  fail,
  isTerminal,
  listNew,
  type PendingHooks,
  pause,
  reject,
  resume,
  rollBack,
  runAgain,
} from "./transition.js";
