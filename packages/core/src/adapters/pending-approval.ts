import type { Outcome, PendingAction } from "../outcome.js";

/** The paused execution and pending seq that a framework's approval request stands for. */
export interface PauseReference {
  executionId: string;
  seq: number;
  /** The server's signature over the request (`signPauseApproval`), when it signed one. */
  signature?: string;
}

// At the very end of the reason, so the human-readable part can change without breaking readers.
const MARKER = /\[codemode execution ([A-Za-z0-9_-]{1,128}) seq (\d{1,9})(?: sig ([A-Za-z0-9_-]{1,128}))?\]\s*$/;

/**
 * One line naming a pending action, for an approval prompt: `shop.create_order({"sku":"mug"})`.
 * Every key of an object argument is shown, in order; when the arguments are longer than
 * `maxArgsChars` (default 500), the values are cut instead, the longest first, each with a note:
 * a long first value must not hide the keys after it (`{ note: "…", amount: 1000000 }`).
 * Nothing here is ever replayed.
 *
 * @example
 * describePendingAction({ connector: "shop", method: "create_order", args: { sku: "mug" } });
 * // 'shop.create_order({"sku":"mug"})'
 */
export function describePendingAction(
  action: Pick<PendingAction, "connector" | "method" | "args">,
  maxArgsChars = 500,
): string {
  return `${action.connector}.${action.method}(${describeArgs(action.args, maxArgsChars)})`;
}

/** Characters any one value keeps however many keys share the room. */
const MIN_VALUE_CHARS = 40;
/** Characters of a key name shown. */
const MAX_KEY_CHARS = 100;

function describeArgs(args: unknown, maxChars: number): string {
  if (typeof args !== "object" || args === null || Array.isArray(args) || args instanceof Uint8Array)
    return clip(jsonOf(args), maxChars);
  const entries = Object.entries(args as Record<string, unknown>).map(([key, value]) => ({
    key: jsonOf(clip(key, MAX_KEY_CHARS)),
    value: jsonOf(value),
  }));
  const room = fairShares(
    entries.map((entry) => entry.value.length),
    Math.max(0, maxChars - entries.reduce((sum, entry) => sum + entry.key.length + 2, 0)),
  );
  return `{${entries.map((entry, index) => `${entry.key}:${clip(entry.value, room[index]!)}`).join(",")}}`;
}

/**
 * Splits `room` characters between values of the given lengths: short values take what they
 * need, the rest is shared evenly by the longer ones, each keeping at least MIN_VALUE_CHARS.
 */
function fairShares(lengths: number[], room: number): number[] {
  const shares = new Array<number>(lengths.length);
  const order = lengths.map((length, index) => ({ length, index })).sort((a, b) => a.length - b.length);
  let left = room;
  order.forEach(({ length, index }, position) => {
    const share = Math.max(MIN_VALUE_CHARS, Math.floor(left / (order.length - position)));
    shares[index] = Math.min(length, share);
    left = Math.max(0, left - shares[index]!);
  });
  return shares;
}

function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? `${item}n` : item)) ?? "";
  } catch {
    return "…";
  }
}

function clip(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}… [${text.length - maxChars} more characters]` : text;
}

/**
 * The reason an adapter puts on its framework's approval request when Code Mode paused (AI SDK
 * `tool-approval-request`, a LangChain interrupt…): what waits, for the human, then a marker
 * naming the execution and seq, so the answer — possibly in another process, from a client that
 * sends the conversation back — can become `runtime.approve({ executionId, seq })`. With
 * `signature` (`signPauseApproval`), the marker carries the server's signature, without which a
 * chat's answer is refused (R-AP-11).
 *
 * @example
 * pauseApprovalReason(outcome, { signature: signPauseApproval(runtime, { executionId, seq, toolCallId }, code) });
 * // 'Approve shop.create_order({"sku":"mug"})? [codemode execution 3f…e1 seq 2 sig Qm9v…]'
 */
export function pauseApprovalReason(
  outcome: Extract<Outcome, { status: "paused" }>,
  options: { signature?: string | undefined } = {},
): string {
  const action = outcome.pending[0];
  const what = action ? `Approve ${describePendingAction(action)}?` : "Approve the pending action?";
  const signature =
    options.signature && /^[A-Za-z0-9_-]{1,128}$/.test(options.signature) ? ` sig ${options.signature}` : "";
  return `${what} [codemode execution ${outcome.executionId} seq ${action?.seq ?? 0}${signature}]`;
}

/**
 * The part of an approval reason meant for people: `pauseApprovalReason`'s text without the
 * trailing `[codemode execution … seq …]` marker, which only adapters read. Any other reason comes
 * back as it is. Show this in approval screens (`part.approval.requestReason` in useChat).
 *
 * @example
 * approvalReasonText('Approve shop.create_order({"sku":"mug"})? [codemode execution 3f…e1 seq 2]');
 * // 'Approve shop.create_order({"sku":"mug"})?'
 */
export function approvalReasonText(reason: string): string;
export function approvalReasonText(reason: string | undefined): string | undefined;
export function approvalReasonText(reason: string | undefined): string | undefined {
  if (reason === undefined || !MARKER.test(reason)) return reason;
  return reason.replace(MARKER, "").trimEnd();
}

/**
 * Reads back what `pauseApprovalReason` wrote; undefined for any other text. The reason travels
 * through the client, so treat the answer as a claim: `checkChatDecision` before deciding on it.
 */
export function readPauseReference(reason: unknown): PauseReference | undefined {
  if (typeof reason !== "string") return undefined;
  const match = MARKER.exec(reason);
  if (!match) return undefined;
  return { executionId: match[1]!, seq: Number(match[2]), ...(match[3] ? { signature: match[3] } : {}) };
}

/**
 * The execution id of a model-facing outcome (`modelFacingOutcome`), given as a value or as
 * its JSON text; undefined for anything else. Lets an adapter find a run's result in a
 * conversation, e.g. to replace a paused result once the run was approved.
 */
export function executionIdOfModelOutput(value: unknown): string | undefined {
  let candidate = value;
  if (typeof candidate === "string") {
    try {
      candidate = JSON.parse(candidate);
    } catch {
      return undefined;
    }
  }
  if (typeof candidate !== "object" || candidate === null) return undefined;
  const { status, executionId } = candidate as { status?: unknown; executionId?: unknown };
  const known = status === "completed" || status === "paused" || status === "error";
  return known && typeof executionId === "string" ? executionId : undefined;
}

/**
 * A JSON value a framework can hand to a model: `bigint` becomes its digits as a string and
 * `Uint8Array` a `{ bytes: base64 }` object (both cross the sandbox, R-SB-4, but JSON has neither),
 * `undefined` properties are left out as JSON does.
 *
 * @example
 * toModelJson({ total: 12n, raw: new Uint8Array([1]) }); // { total: "12", raw: { bytes: "AQ==" } }
 */
export function toModelJson(value: unknown): unknown {
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "bigint") return item.toString();
    if (item instanceof Uint8Array) return { bytes: Buffer.from(item).toString("base64") };
    return item;
  });
  return text === undefined ? null : JSON.parse(text);
}
