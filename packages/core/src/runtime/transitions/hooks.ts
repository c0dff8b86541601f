import type { Connector } from "../../connectors/define-connector.js";
import { errorMessage } from "../../error-message.js";
import type { ExecutionEndStatus } from "../../outcome.js";

type Warn = (message: string) => void;

/**
 * R-RS-1: every configured connector's `onPassEnd` after every pass; on a terminal pass it runs
 * before `disposeExecution`. R-RS-3: errors are swallowed and logged; hooks keep no instance
 * memory, so they may run on another runtime instance or process.
 */
export async function runPassEndHooks(
  connectors: ReadonlyMap<string, Connector>,
  warn: Warn,
  executionId: string,
  status: "paused" | ExecutionEndStatus,
): Promise<void> {
  await runHook(connectors, "onPassEnd", warn, executionId, status);
  if (status !== "paused") await runDisposeHooks(connectors, warn, executionId, status);
}

/** R-RS-2: every configured connector's `disposeExecution` when an execution becomes terminal. */
export async function runDisposeHooks(
  connectors: ReadonlyMap<string, Connector>,
  warn: Warn,
  executionId: string,
  status: ExecutionEndStatus,
): Promise<void> {
  await runHook(connectors, "disposeExecution", warn, executionId, status);
}

/** One hook of every connector that has it, in order; one that throws is reported and the rest still run. */
async function runHook(
  connectors: ReadonlyMap<string, Connector>,
  hook: "onPassEnd" | "disposeExecution",
  warn: Warn,
  executionId: string,
  status: ExecutionEndStatus | "paused",
): Promise<void> {
  for (const connector of connectors.values()) {
    const run = connector[hook] as
      | ((executionId: string, status: ExecutionEndStatus | "paused") => unknown)
      | undefined;
    if (!run) continue;
    try {
      await run.call(connector, executionId, status);
    } catch (error) {
      warn(`${hook} of connector "${connector.name}" threw for execution ${executionId}: ${errorMessage(error)}`);
    }
  }
}
