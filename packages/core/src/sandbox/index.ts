export type { Executor, HostReply, PassRequest, PassResult, ReplayEntry, SandboxFailureCode, SandboxRequest } from "./executor.js";
export { createIsolatedVmExecutor, type IsolatedVmExecutor, type IsolatedVmExecutorOptions } from "./isolated-vm-executor.js";
export { normalizeCode, type NormalizedCode } from "./normalize-code.js";
export { valueCodec, isValueCodecError, type ValueCodec } from "./value-codec.js";
export { createWorkerThreadExecutor, type WorkerThreadExecutor, type WorkerThreadExecutorOptions } from "./worker-thread-executor.js";
