export { createQuickJsExecutor, type QuickJsExecutor, type QuickJsExecutorOptions } from "./quickjs-executor.js";
