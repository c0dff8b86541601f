import type { CancelRequest, ExecutionStore } from "../../log/execution-store.js";
import type { PassesHere, PassHere } from "../context/index.js";

/** How often a running pass reads its execution's cancel request, from its first second on. */
export const CANCEL_POLL_MS = 1_000;

/**
 * The cancel side of one running pass. A cancel asked in this process reaches it at once
 * (`cancel`); one asked in another process is a request in the store, which the pass reads every
 * `CANCEL_POLL_MS` once it has run that long (most passes end sooner and never read it). Either
 * way the pass's signal aborts: the executor tears the sandbox down, and each tool call still
 * running sees its `ToolContext.signal` abort.
 *
 * A store that cannot be read while polling is asked again at the next tick: not knowing of a
 * request is not a request, and the pass goes on.
 */
export class CancelWatch implements PassHere {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  /** The request that cancelled the pass, once one did. */
  request: CancelRequest | undefined;

  constructor(
    private readonly store: ExecutionStore,
    private readonly executionId: string,
    private readonly passes: PassesHere,
  ) {
    // One pass of an execution runs at a time (its lease): the newest is the one to stop.
    passes.set(executionId, this);
    this.timer = setInterval(() => this.poll(), CANCEL_POLL_MS);
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the pass for `request`; later requests change nothing. */
  cancel(request: CancelRequest): void {
    if (this.request) return;
    this.request = request;
    this.controller.abort(cancelMessage(request));
  }

  /** The pass ended: no more polling, and this runtime no longer lists it. */
  end(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.passes.get(this.executionId) === this) this.passes.delete(this.executionId);
  }

  private poll(): void {
    if (this.reading || this.request) return;
    this.reading = true;
    this.store
      .readCancel(this.executionId)
      .then(
        (request) => {
          // Read after the pass ended: `runtime.cancel` deals with the run as it stands then.
          if (request && this.timer) this.cancel(request);
        },
        () => undefined,
      )
      .finally(() => {
        this.reading = false;
      });
  }
}

/** The one wording of a cancelled run's error: who cancelled it and why, when they said. */
export function cancelMessage(request: CancelRequest): string {
  return `cancelled${request.by ? ` by ${request.by}` : ""}${request.reason ? `: ${request.reason}` : ""}`;
}
