// The worker-thread executor runs QuickJS on sandbox threads (`engine: "quickjs"`); exported here
// too, since `@codemode/core/sandbox` also exports the isolated-vm executor, which loads the addon.
export {
  createWorkerThreadExecutor,
  type WorkerThreadExecutor,
  type WorkerThreadExecutorOptions,
} from "../hosts/worker-thread-executor.js";
export { createQuickJsExecutor, type QuickJsExecutor, type QuickJsExecutorOptions } from "./quickjs-executor.js";
