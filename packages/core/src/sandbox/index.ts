export { type NormalizedCode, normalizeCode } from "./code/normalize-code.js";
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
export {
  createWorkerThreadExecutor,
  type WorkerThreadExecutor,
  type WorkerThreadExecutorOptions,
} from "./hosts/worker-thread-executor.js";
export type { IsolateReuse } from "./isolated-vm/isolate-reuse.js";
export {
  createIsolatedVmExecutor,
  type IsolatedVmExecutor,
  type IsolatedVmExecutorOptions,
} from "./isolated-vm/isolated-vm-executor.js";
export { isValueCodecError, type ValueCodec, valueCodec } from "./prelude/value-codec.js";
