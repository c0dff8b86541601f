import type { Context, Span, Tracer } from "@opentelemetry/api";
import type { StoredEntry } from "../log/interface.js";
import { replayEntries } from "../runtime/records/index.js";
import type { HostReply, SandboxRequest } from "../sandbox/executor.js";
import { CODEMODE_ATTRIBUTES as A, CODEMODE_SPANS } from "./attributes.js";
import type { Attributes, RequestHandler } from "./interface.js";

export type OpenTelemetryApi = typeof import("@opentelemetry/api");

interface CallObserver {
  api: OpenTelemetryApi;
  tracer: Tracer;
  /** The pass span's context. */
  parent: Context;
  executionId: string;
  /** The pass's log: the recorder writes each entry here before its store write settles. */
  log: ReadonlyMap<number, StoredEntry>;
  recordValues: boolean;
}

/** What a request is, as a call: connector calls, steps and the built-in fetch take a seq. */
function callOf(
  request: SandboxRequest,
): { seq: number; connector: string; method: string; args?: string; step?: string } | undefined {
  if (request.type === "call")
    return { seq: request.seq, connector: request.connector, method: request.method, args: request.args };
  if (request.type === "step") return { seq: request.seq, connector: "codemode", method: "step", step: request.name };
  if (request.type === "service" && request.name === "fetch" && request.seq !== undefined)
    return { seq: request.seq, connector: "codemode", method: "fetch", args: request.args };
  return undefined;
}

/**
 * Wraps the pass's request handler: each call the host answers gets a span, made active while
 * the tool runs (so a connector's own instrumentation nests under it). The decision is read
 * from the log entry before and after, which keeps the pass code free of telemetry.
 */
export function observeCalls(observer: CallObserver, handler: RequestHandler): RequestHandler {
  const { api, tracer, parent, log } = observer;
  return (request) => {
    const call = callOf(request);
    if (!call) return handler(request);
    const before = log.get(call.seq);
    const attributes: Attributes = {
      [A.executionId]: observer.executionId,
      [A.connector]: call.connector,
      [A.method]: call.method,
      [A.seq]: call.seq,
    };
    if (call.step !== undefined) attributes[A.stepName] = stepName(call.step, observer.recordValues);
    if (observer.recordValues && call.args !== undefined) attributes[A.arguments] = call.args;
    const span = tracer.startSpan(
      `${CODEMODE_SPANS.callPrefix}${call.connector}.${call.method}`,
      { attributes },
      parent,
    );
    let reply: Promise<HostReply>;
    try {
      reply = api.context.with(api.trace.setSpan(parent, span), () => handler(request));
    } catch (error) {
      span.end();
      throw error;
    }
    return reply.then(
      (answer) => {
        finishCall(observer, span, call.connector, before, log.get(call.seq), answer);
        return answer;
      },
      (error: unknown) => {
        span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  };
}

function finishCall(
  observer: CallObserver,
  span: Span,
  connector: string,
  before: StoredEntry | undefined,
  after: StoredEntry | undefined,
  answer: HostReply,
): void {
  const decision = decisionOf(before, after, answer);
  span.setAttribute(A.decision, decision);
  span.setAttribute(A.replayed, decision === "replay");
  if (after) span.setAttribute(A.state, after.state);
  if (decision === "execute" && before?.decision?.approved) span.setAttribute(A.approved, true);
  if (observer.recordValues) {
    if (answer.kind === "value" && connector !== "codemode") span.setAttribute(A.result, answer.value);
    if (answer.kind === "error") span.setAttribute(A.error, answer.message);
  }
  if (after?.state === "error" || answer.kind === "error")
    span.setStatus({
      code: observer.api.SpanStatusCode.ERROR,
      ...(observer.recordValues && answer.kind === "error" ? { message: answer.message } : {}),
    });
  span.end();
}

/** replay, execute, pause, refuse (nothing recorded, e.g. not a configured tool) or halt (divergence, lost lease, store failure). */
function decisionOf(before: StoredEntry | undefined, after: StoredEntry | undefined, answer: HostReply): string {
  if (after?.state === "pending") return "pause";
  if (before && after === before) {
    // An ephemeral call runs again without a new record; a step's record is replayed as is.
    if (before.ephemeral && answer.kind !== "halt") return "execute";
    return answer.kind === "halt" ? "halt" : "replay";
  }
  if (after && after !== before) return "execute";
  return answer.kind === "halt" ? "halt" : "refuse";
}

/**
 * Spans for the calls the sandbox answers by itself from the preloaded log (they never reach
 * the host): started and ended at the pass's start, one per entry it was given.
 */
/** Characters of a step's name kept without `recordValues`: the program names steps, and may put personal data there. */
export const STEP_NAME_CHARS = 24;

/** A step's name for a span: whole with `recordValues`, else cut to `STEP_NAME_CHARS`. */
function stepName(name: string, recordValues: boolean): string {
  return recordValues || name.length <= STEP_NAME_CHARS ? name : `${name.slice(0, STEP_NAME_CHARS - 1)}…`;
}

export function recordReplays(
  tracer: Tracer,
  parent: Context,
  executionId: string,
  log: ReadonlyMap<number, StoredEntry>,
  recordValues: boolean,
): number {
  let count = 0;
  for (const entry of replayEntries(log)) {
    const connector = entry.kind === "step" ? "codemode" : entry.connector;
    const method = entry.kind === "step" ? "step" : entry.method;
    const attributes: Attributes = {
      [A.executionId]: executionId,
      [A.connector]: connector,
      [A.method]: method,
      [A.seq]: entry.seq,
      [A.decision]: "replay",
      [A.replayed]: true,
    };
    const state = log.get(entry.seq)?.state;
    if (state) attributes[A.state] = state;
    if (entry.kind === "step") attributes[A.stepName] = stepName(entry.name, recordValues);
    if (recordValues) {
      if (entry.kind === "call" && entry.args !== undefined) attributes[A.arguments] = entry.args;
      attributes[entry.outcome === "value" ? A.result : A.error] = entry.text;
    }
    tracer.startSpan(`${CODEMODE_SPANS.callPrefix}${connector}.${method}`, { attributes }, parent).end();
    count++;
  }
  return count;
}
