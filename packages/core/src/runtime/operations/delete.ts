import { errorMessage } from "../../error-message.js";
import type { RuntimeContext } from "../context/index.js";
import { isTerminal } from "../transitions/index.js";
import { controlStep } from "./control-step.js";

/**
 * R-RE-3: deletes an execution and its log; a non-terminal one is disposed. False when there is
 * no such execution. Rejects with BUSY when it stayed held and STORAGE_ERROR when the store
 * fails (R-RT-3).
 */
export async function deleteExecution(context: RuntimeContext, executionId: string): Promise<boolean> {
  return controlStep(context, executionId, { doing: "delete" }, async ({ head, owe }) => {
    if (!head) return false;
    await context.store.deleteExecution(head);
    if (!isTerminal(head.status)) owe({ kind: "dispose", status: head.status === "paused" ? "rejected" : "error" });
    // The record is gone; a row left behind is dropped by the next reader that meets it.
    await context.index
      .remove(head)
      .catch((error: unknown) =>
        context.warn(`execution ${executionId} was deleted, but its listing row was not: ${errorMessage(error)}`),
      );
    return true;
  });
}
