// SEP-2663 (the tasks extension, `io.modelcontextprotocol/tasks`, protocol 2026-07-28): a server may
// answer `tools/call` with `resultType: "task"`, but only to a request whose client capabilities
// declare the extension. The SDK 2.4 client has no task support: its codec refuses such an answer
// (UNSUPPORTED_RESULT_TYPE) before any result schema runs. The connector receives a client that is
// already connected, so it hooks that client's transport, for its own calls only:
// - on the way out, a `tools/call` the connector marked declares the extension (merged into the
//   per-request client capabilities the SDK put there) and loses the mark;
// - on the way in, the answer to that request, when it is a task, is kept aside for the connector
//   and handed to the SDK as a placeholder result it accepts.
// Every other message (the application's own calls on the same client included) passes untouched,
// so the server never returns a task to a caller that cannot take one.

import { TASKS_EXTENSION } from "./protocol-names.js";
import { objectOf } from "./sdk2-client.js";

/** Where a 2026-07-28 request carries its client's capabilities. */
const CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";

/** Marks one of the connector's calls between the SDK and the transport; never sent. */
const CALL_MARK_META = "codemode/taskCall";

type Send = (message: unknown, options?: unknown) => Promise<void>;
type OnMessage = (message: unknown, extra?: unknown) => void;

interface Transport {
  send: Send;
  onmessage?: OnMessage | undefined;
}

interface Expected {
  /** The task the server answered with; undefined until then, and for a plain answer. */
  task?: Record<string, unknown>;
}

interface Hook {
  send: Send;
  onmessage: OnMessage;
  inner: { send: Send; onmessage: OnMessage | undefined };
  /** The connector's calls in flight, by the mark in their `_meta`. */
  byMark: Map<string, Expected>;
  /** The same calls by JSON-RPC id once sent (a retried call has several). */
  byId: Map<string | number, Expected>;
  nextMark: number;
}

const hooks = new WeakMap<object, Hook>();

/** One of the connector's calls that the server may answer with a task. */
export interface TaskCall {
  /** What to merge into the call's `_meta`: the mark the hook knows it by. */
  meta: Record<string, string>;
  /** The task the server answered with (`resultType: "task"`), or undefined for a plain answer. */
  task(): Record<string, unknown> | undefined;
  /** Forgets the call; call it when the call ends, however. */
  end(): void;
}

/**
 * Prepares one `tools/call` of the connector to receive a task answer: hooks the client's current
 * transport (again, when the client reconnected since) and hands back the mark to put in the
 * call's `_meta`. Undefined when the transport cannot be hooked; then call without the extension.
 *
 * @example
 * const call = expectTaskAnswer(client);
 * const answer = await client.callTool({ name, arguments: args, _meta: { ...meta, ...call?.meta } });
 * const task = call?.task(); // a task to poll, or undefined: `answer` is the tool's result
 */
export function expectTaskAnswer(client: unknown): TaskCall | undefined {
  const transport = (client as { transport?: unknown }).transport as Transport | undefined;
  if (typeof transport !== "object" || transport === null || typeof transport.send !== "function") return undefined;
  const hook = hooked(transport);
  if (!hook) return undefined;
  const mark = `${hook.nextMark++}`;
  const expected: Expected = {};
  hook.byMark.set(mark, expected);
  return {
    meta: { [CALL_MARK_META]: mark },
    task: () => expected.task,
    end() {
      hook.byMark.delete(mark);
      for (const [id, entry] of hook.byId) if (entry === expected) hook.byId.delete(id);
    },
  };
}

/** The transport's hook, installed or renewed: a reconnect sets `onmessage` again, over ours. */
function hooked(transport: Transport): Hook | undefined {
  let hook = hooks.get(transport);
  if (!hook) {
    const created: Hook = {
      send: (message, options) => created.inner.send.call(transport, outgoing(created, message), options),
      onmessage: (message, extra) => created.inner.onmessage?.call(transport, incoming(created, message), extra),
      inner: { send: transport.send, onmessage: transport.onmessage },
      byMark: new Map(),
      byId: new Map(),
      nextMark: 1,
    };
    hook = created;
    hooks.set(transport, hook);
  }
  try {
    if (transport.send !== hook.send) {
      hook.inner.send = transport.send;
      transport.send = hook.send;
    }
    if (transport.onmessage !== hook.onmessage) {
      hook.inner.onmessage = transport.onmessage;
      transport.onmessage = hook.onmessage;
    }
  } catch {
    // A frozen or read-only transport: the connector calls without the extension.
    return undefined;
  }
  return transport.send === hook.send && transport.onmessage === hook.onmessage ? hook : undefined;
}

/** A marked `tools/call` declares the extension and loses its mark; anything else passes as it is. */
function outgoing(hook: Hook, message: unknown): unknown {
  const request = objectOf(message);
  const params = objectOf(request?.params);
  const meta = objectOf(params?._meta);
  const mark = meta?.[CALL_MARK_META];
  if (!request || !params || !meta || typeof mark !== "string") return message;
  const { [CALL_MARK_META]: _mark, ...rest } = meta;
  const expected = hook.byMark.get(mark);
  if (!expected || request.method !== "tools/call") return { ...request, params: { ...params, _meta: rest } };
  if (typeof request.id === "string" || typeof request.id === "number") hook.byId.set(request.id, expected);
  const capabilities = objectOf(rest[CLIENT_CAPABILITIES_META]) ?? {};
  const extensions = { ...objectOf(capabilities.extensions), [TASKS_EXTENSION]: {} };
  const declared = { ...rest, [CLIENT_CAPABILITIES_META]: { ...capabilities, extensions } };
  return { ...request, params: { ...params, _meta: declared } };
}

/** The answer to a marked call: a task is kept aside and replaced by a result the SDK accepts. */
function incoming(hook: Hook, message: unknown): unknown {
  const response = objectOf(message);
  const id = response?.id;
  // Only answers (a result or an error) settle a call; the server's own requests carry ids too.
  if (!response || (typeof id !== "string" && typeof id !== "number") || !("result" in response || "error" in response))
    return message;
  const expected = hook.byId.get(id);
  if (!expected) return message;
  hook.byId.delete(id);
  const result = objectOf(response.result);
  if (result?.resultType !== "task") return message;
  expected.task = result;
  // `isError` keeps the SDK from checking the placeholder against the tool's output schema.
  return { ...response, result: { content: [], isError: true, resultType: "complete" } };
}
