import { errorMessage } from "../../error-message.js";
import { withLease } from "../../log/lease.js";
import { CodemodeError, type ExecutionEndStatus } from "../../outcome.js";
import type { RuntimeContext } from "../context.js";
import { asStorageError } from "../failure.js";
import { afterTransition, isTerminal } from "../transition.js";

/**
 * R-RE-3: deletes an execution and its log; a non-terminal one is disposed. False when there is
 * no such execution. Rejects with BUSY when it stayed held and STORAGE_ERROR when the store
 * fails (R-RT-3).
 */
export async function deleteExecution(context: RuntimeContext, executionId: string): Promise<boolean> {
  let disposeAs: ExecutionEndStatus | undefined;
  let done: boolean | null;
  try {
    done = await withLease(context.leases, executionId, context.settings.lockWaitMs, async () => {
      const head = await context.store.readHead(executionId);
      if (!head) return false;
      if (!isTerminal(head.status)) disposeAs = head.status === "paused" ? "rejected" : "error";
      await context.store.deleteExecution(head);
      // The record is gone; a row left behind is dropped by the next reader that meets it.
      await context.index
        .remove(head)
        .catch((error: unknown) =>
          context.warn(`execution ${executionId} was deleted, but its listing row was not: ${errorMessage(error)}`),
        );
      return true;
    });
  } catch (error) {
    throw asStorageError(`could not delete execution ${executionId}`, error);
  }
  if (done === null)
    throw new CodemodeError(
      "BUSY",
      `execution ${executionId} is busy (a pass or a control operation holds it); try again`,
    );
  if (disposeAs) await afterTransition(context, executionId, { kind: "dispose", status: disposeAs });
  return done;
}
