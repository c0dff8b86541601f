export type {
  Executor,
  HostReply,
  PassRequest,
  PassResult,
  ReplayEntry,
  SandboxCrash,
  SandboxFailureCode,
  SandboxRequest,
} from "./executor.js";
export {
  createProcessExecutor,
  type ProcessExecutor,
  type ProcessExecutorOptions,
  type ProcessExecutorStats,
} from "./hosts/process-host.js";
export type { IsolateReuse } from "./isolate-reuse.js";
export {
  createIsolatedVmExecutor,
  type IsolatedVmExecutor,
  type IsolatedVmExecutorOptions,
} from "./isolated-vm-executor.js";
export { type NormalizedCode, normalizeCode } from "./normalize-code.js";
export { isValueCodecError, type ValueCodec, valueCodec } from "./value-codec.js";
export {
  createWorkerThreadExecutor,
  type WorkerThreadExecutor,
  type WorkerThreadExecutorOptions,
} from "./worker-thread-executor.js";
