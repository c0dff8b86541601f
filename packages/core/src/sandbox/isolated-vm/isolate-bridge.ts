import ivm from "isolated-vm";
import type { PassRequest } from "../executor.js";
import type { LogCollector } from "../pass/log-collector.js";
import { PassRequests, randomBytesSource } from "../pass/pass-requests.js";
import type { IsolateWatchdog } from "./isolate-watchdog.js";

/**
 * The host's end of the bridge for one pass in isolated-vm (see docs/decisions.md, "Sandbox
 * bridge"): the callbacks the sandbox calls and the delivery of replies through its `deliver`
 * reference. What is checked, ordered and waited for is in PassRequests (pass-requests.ts).
 */
export class IsolateBridge extends PassRequests {
  /** The sandbox's deliver function, once setup has returned it. */
  deliver: ivm.Reference<(id: number, kind: number, text: string) => void> | undefined;

  constructor(
    private readonly isolate: ivm.Isolate,
    request: PassRequest,
    deadline: number,
    logs: LogCollector,
    private readonly watchdog: IsolateWatchdog,
  ) {
    super(request, deadline, logs);
  }

  /**
   * What the host callbacks reach, cut when the pass ends: isolated-vm releases a disposed
   * isolate's callbacks only the next time this thread runs isolated-vm work, and a host idle
   * after a burst of pauses would otherwise keep every pass's bridge (its request, and through
   * it the whole log) alive until then.
   */
  private readonly port: { bridge: IsolateBridge | undefined; randomBytes: ((count: unknown) => string) | undefined } =
    {
      bridge: this,
      randomBytes: undefined,
    };

  submitCallback(): ivm.Callback {
    const port = this.port;
    return new ivm.Callback((id: unknown, text: unknown, args: unknown) => port.bridge?.submit(id, text, args));
  }

  /** How the program reports its end: a host callback, never a promise the host waits on (R-RT-5). */
  finishCallback(): ivm.Callback {
    const port = this.port;
    return new ivm.Callback((text: unknown) => {
      if (typeof text === "string") port.bridge?.finish(text);
    });
  }

  logCallback(): ivm.Callback {
    const port = this.port;
    return new ivm.Callback((level: unknown, text: unknown) => {
      if (typeof level === "string" && typeof text === "string") port.bridge?.logs.add(level, text);
    });
  }

  /**
   * Bytes for the sandbox's `crypto`, as base64 text (at most 64 KiB per call): real randomness
   * for `deterministic: false`, the keyed stream of the execution's secret seed when `keyed`.
   */
  randomBytesCallback(): ivm.Callback {
    const port = this.port;
    // Like every callback of the pass, it stops answering when the pass ends.
    port.randomBytes = randomBytesSource(this.request.deterministic);
    return new ivm.Callback((count: unknown) => port.randomBytes?.(count) ?? "");
  }

  /** The pass has ended: nothing more is delivered, timers stop, the deliver reference is released. */
  override end(): void {
    super.end();
    this.port.bridge = undefined;
    this.port.randomBytes = undefined;
    this.deliver?.release();
  }

  protected override get sandboxReady(): boolean {
    return this.deliver !== undefined && !this.isolate.isDisposed;
  }

  protected override async deliverNow(id: number, kind: number, text: string): Promise<void> {
    try {
      const timeout = Math.max(1, this.deadline - Date.now());
      // Alone in a sandbox process, the program runs on this thread: its next call is issued in
      // the same turn, without a hop to isolated-vm's thread and back (see PassRequest.ownsThread).
      if (this.request.ownsThread?.()) {
        this.deliver!.applySync(undefined, [id, kind, text], { timeout });
        return;
      }
      await this.deliver!.apply(undefined, [id, kind, text], { timeout });
    } catch (error) {
      this.watchdog.deliveryFailed(error);
    }
  }
}
