import type { Connector } from "../connectors/define-connector.js";
import { errorMessage } from "../error-message.js";
import type { ExecutionEndStatus } from "../outcome.js";

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
  for (const connector of connectors.values()) {
    if (!connector.onPassEnd) continue;
    try {
      await connector.onPassEnd(executionId, status);
    } catch (error) {
      warn(`onPassEnd of connector "${connector.name}" threw for execution ${executionId}: ${errorMessage(error)}`);
    }
  }
  if (status !== "paused") await runDisposeHooks(connectors, warn, executionId, status);
}

/** R-RS-2: every configured connector's `disposeExecution` when an execution becomes terminal. */
export async function runDisposeHooks(
  connectors: ReadonlyMap<string, Connector>,
  warn: Warn,
  executionId: string,
  status: ExecutionEndStatus,
): Promise<void> {
  for (const connector of connectors.values()) {
    if (!connector.disposeExecution) continue;
    try {
      await connector.disposeExecution(executionId, status);
    } catch (error) {
      warn(
        `disposeExecution of connector "${connector.name}" threw for execution ${executionId}: ${errorMessage(error)}`,
      );
    }
  }
}
