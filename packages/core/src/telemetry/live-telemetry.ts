import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, Span, Tracer } from "@opentelemetry/api";
import { errorMessage } from "../error-message.js";
import type { ExecutionHead, StoredEntry } from "../log/interface.js";
import type { DecisionKind } from "../outcome.js";
import type { PassEnd } from "../runtime/records/index.js";
import { CODEMODE_ATTRIBUTES as A, CODEMODE_EVENTS, CODEMODE_SPANS } from "./attributes.js";
import { type OpenTelemetryApi, observeCalls, recordReplays } from "./call-spans.js";
import type { Attributes, OperationSpan, RequestHandler, Telemetry } from "./interface.js";
import type { TelemetryOptions } from "./telemetry-options.js";

/** The operation running now in this async chain: its span is the parent of the passes it runs. */
interface Scope {
  span: Span;
  context: Context;
  operation: string;
  /** Set once the first pass of an approve or decide reported the decisions it starts from. */
  decisionsNoted?: boolean;
  /** The seqs a decide was asked to deny (`noteDenials`). */
  denials?: ReadonlySet<number>;
}

const scopes = new AsyncLocalStorage<Scope>();

/** The event of each kind of decision, on the approve or decide span. */
const DECISION_EVENTS: Readonly<Record<DecisionKind, string>> = {
  approve: CODEMODE_EVENTS.approve,
  edit: CODEMODE_EVENTS.edit,
  deny: CODEMODE_EVENTS.deny,
};

/**
 * Tells the operation running now which actions it was asked to deny, for its decision events.
 * An approved or edited action is still pending in the log its pass starts from, so the log alone
 * tells those apart; a denied one is settled at once, and looks like a denial made by an earlier
 * operation. Outside an operation's span (telemetry off), nothing happens.
 */
export function noteDenials(seqs: Iterable<number>): void {
  const scope = scopes.getStore();
  if (scope) scope.denials = new Set(seqs);
}

/**
 * Telemetry on `@opentelemetry/api`, imported on first use. Parents are passed explicitly
 * (operation → pass → call), so the tree holds without a context manager; the operation's span
 * starts under the application's active context, so it joins the agent framework's trace.
 */
export class LiveTelemetry implements Telemetry {
  readonly enabled = true;
  readonly recordValues: boolean;
  private api: OpenTelemetryApi | undefined;
  private tracer: Tracer | undefined;
  private loading: Promise<void> | undefined;
  /** The span of the pass each execution is running (one pass per execution at a time: its lease). */
  private readonly passes = new WeakMap<ExecutionHead, { span: Span; context: Context }>();

  constructor(
    private readonly options: TelemetryOptions,
    private readonly runtimeName: string,
    private readonly warn: (message: string) => void,
  ) {
    this.recordValues = options.recordValues === true;
  }

  async operation<T>(
    name: string,
    attributes: Attributes,
    run: () => Promise<T>,
    describe: (span: OperationSpan, result: T) => void,
  ): Promise<T> {
    await this.load();
    const { api, tracer } = this;
    if (!api || !tracer) return run();
    const parent = api.context.active();
    const span = tracer.startSpan(
      `${CODEMODE_SPANS.operationPrefix}${name}`,
      { attributes: { [A.runtimeName]: this.runtimeName, [A.operation]: name, ...attributes } },
      parent,
    );
    const context = api.trace.setSpan(parent, span);
    try {
      const result = await scopes.run({ span, context, operation: name }, () => api.context.with(context, run));
      describe(this.operationSpan(api, span), result);
      return result;
    } catch (error) {
      const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "ERROR";
      this.operationSpan(api, span).fail(code, errorMessage(error));
      throw error;
    } finally {
      span.end();
    }
  }

  passAdmitted(head: ExecutionHead, admission: { queuedMs: number; queueLength: number }): void {
    const pass = this.passes.get(head);
    pass?.span.setAttributes({
      [A.passQueuedMs]: Math.round(admission.queuedMs),
      [A.passQueueLength]: admission.queueLength,
    });
  }

  async pass(
    head: ExecutionHead,
    log: ReadonlyMap<number, StoredEntry>,
    run: () => Promise<PassEnd>,
  ): Promise<PassEnd> {
    const { api, tracer } = this;
    if (!api || !tracer) return run();
    const scope = scopes.getStore();
    const parent = scope?.context ?? api.context.active();
    // execute learns its execution id only once the pass starts.
    scope?.span.setAttribute(A.executionId, head.id);
    if ((scope?.operation === "approve" || scope?.operation === "decide") && !scope.decisionsNoted) {
      scope.decisionsNoted = true;
      this.noteDecisions(scope, head.id, log);
    }
    const span = tracer.startSpan(
      CODEMODE_SPANS.pass,
      { attributes: { [A.executionId]: head.id, [A.passNumber]: head.passes } },
      parent,
    );
    const context = api.trace.setSpan(parent, span);
    span.setAttribute(A.passReplayedCalls, recordReplays(tracer, context, head.id, log, this.recordValues));
    this.passes.set(head, { span, context });
    try {
      const end = await api.context.with(context, run);
      span.setAttribute(A.passEnd, end.kind);
      if (end.kind === "error") {
        span.setAttribute(A.errorCode, end.code);
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: this.recordValues ? `${end.code}: ${end.message}` : end.code,
        });
      }
      if (end.kind === "paused")
        for (const seq of end.pendingSeqs) this.notePause(seq, head.id, log, [span, scope?.span]);
      return end;
    } catch (error) {
      span.setStatus({
        code: api.SpanStatusCode.ERROR,
        message: this.recordValues && error instanceof Error ? error.message : "the pass threw",
      });
      throw error;
    } finally {
      this.passes.delete(head);
      span.end();
    }
  }

  observeRequests(head: ExecutionHead, log: ReadonlyMap<number, StoredEntry>, handler: RequestHandler): RequestHandler {
    const { api, tracer } = this;
    const pass = this.passes.get(head);
    if (!api || !tracer || !pass) return handler;
    return observeCalls(
      { api, tracer, parent: pass.context, executionId: head.id, log, recordValues: this.recordValues },
      handler,
    );
  }

  private load(): Promise<void> {
    this.loading ??= import("@opentelemetry/api").then(
      (api) => {
        this.api = api;
        this.tracer = (this.options.tracer as Tracer | undefined) ?? api.trace.getTracer("@codemode/core");
      },
      (error: unknown) =>
        this.warn(
          `telemetry is off: @opentelemetry/api could not be loaded (${errorMessage(error)}); install it beside @codemode/core`,
        ),
    );
    return this.loading;
  }

  private operationSpan(api: OpenTelemetryApi, span: Span): OperationSpan {
    return {
      set: (key, value) => span.setAttribute(key, value),
      event: (name, attributes) => span.addEvent(name, attributes),
      fail: (code, message) => {
        span.setAttribute(A.errorCode, code);
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: this.recordValues && message ? `${code}: ${message}` : code,
        });
      },
    };
  }

  /**
   * One event per action the operation decided, in seq order: the decisions are written before
   * its pass starts, so the log the pass starts from holds them (approved and edited actions still
   * pending, with their decision; denied ones as `noteDenials` named them). A refused decision
   * starts no pass and leaves no event. Edited arguments, like all values, only with `recordValues`.
   */
  private noteDecisions(scope: Scope, executionId: string, log: ReadonlyMap<number, StoredEntry>): void {
    const decided = [...log.values()]
      .filter(
        (entry) =>
          entry.decision !== undefined &&
          (entry.state === "pending" || (entry.state === "denied" && scope.denials?.has(entry.seq) === true)),
      )
      .sort((a, b) => a.seq - b.seq);
    for (const entry of decided) {
      const decision = entry.decision as NonNullable<StoredEntry["decision"]>;
      // Decisions recorded before they had kinds were approvals or rejections.
      const kind = decision.decision ?? (decision.approved ? "approve" : "deny");
      const attributes: Attributes = {
        [A.executionId]: executionId,
        [A.seq]: entry.seq,
        [A.connector]: entry.connector,
        [A.method]: entry.method,
      };
      if (decision.by) attributes[A.decidedBy] = decision.by;
      if (this.recordValues && decision.reason) attributes[A.reason] = decision.reason;
      if (this.recordValues && kind === "edit") attributes[A.arguments] = entry.args;
      scope.span.addEvent(DECISION_EVENTS[kind], attributes);
    }
  }

  private notePause(
    seq: number,
    executionId: string,
    log: ReadonlyMap<number, StoredEntry>,
    spans: Array<Span | undefined>,
  ): void {
    const entry = log.get(seq);
    const attributes: Attributes = { [A.executionId]: executionId, [A.seq]: seq };
    if (entry) {
      attributes[A.connector] = entry.connector;
      attributes[A.method] = entry.method;
      if (this.recordValues) attributes[A.arguments] = entry.args;
    }
    for (const span of spans) span?.addEvent(CODEMODE_EVENTS.pause, attributes);
  }
}
