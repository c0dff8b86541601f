import { isPauseIdOf } from "../log/pause-id.js";
import type { Outcome, PendingAction } from "../outcome.js";

/** The paused execution, and the pending actions, that a framework's approval request stands for. */
export interface PauseReference {
  executionId: string;
  /** The first action the request shows (for a request of one action, that action). */
  seq: number;
  /**
   * Every action the request shows, ascending, when it shows more than one (R-AP-8): an answer
   * to the request decides exactly these. Absent for a request of one action.
   */
  seqs?: number[];
  /**
   * The pauses the shown actions wait in (`PendingAction.pauseId`), in the order of the seqs: an
   * answer decides those pauses and no later one (R-AP-9). Absent in requests written before
   * actions had pause ids.
   */
  pauses?: string[];
  /** The server's signature over the request (`signPauseApproval`), when it signed one. */
  signature?: string;
}

// At the very end of the reason, so the human-readable part can change without breaking readers.
// Each action as its pause id (`seq 2.1`, `seq 2.1,3.1`; `2.2` once seq 2 was asked again), or as
// its seq alone in requests written before pause ids (`seq 2`, `seq 2,3`).
const MARKER =
  /\[codemode execution ([A-Za-z0-9_-]{1,128}) seq (\d{1,9}(?:\.\d{1,9})?(?:,\d{1,9}(?:\.\d{1,9})?){0,999})(?: sig ([A-Za-z0-9_-]{1,128}))?\]\s*$/;

/** The most actions one approval request shows: the others stay pending, decided separately. */
const MAX_REQUEST_ACTIONS = 20;
/** Characters all the arguments of a request of several actions share, before each keeps its minimum. */
const REQUEST_ARGS_CHARS = 2_000;

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

/**
 * Characters that change how the text around them reads without being seen (bidi controls,
 * zero-width characters, line and paragraph separators): written as JSON escapes, so arguments
 * the program chose cannot reorder what a person reads before "Approve".
 */
const DISGUISING = /[\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u0080-\u009f]/g;

function jsonOf(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? `${item}n` : item)) ?? "";
  } catch {
    return "…";
  }
  return text.replace(DISGUISING, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function clip(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}… [${text.length - maxChars} more characters]` : text;
}

/** How `pauseApprovalReason` writes a request. */
export interface PauseApprovalReasonOptions {
  /**
   * The pending actions the request covers, by seq (say, those a chat may decide). Default every
   * pending action. At most 20 are covered, the lowest seqs first; the others stay pending and
   * the text says how many.
   */
  seqs?: readonly number[];
  /**
   * The server's signature over exactly the actions covered (`signPauseApproval`, R-AP-11): a
   * function of them — `({ seq, seqs }) => signPauseApproval(runtime, { executionId, toolCallId, seq, seqs }, code)`
   * — or, for a request of one action, the signature itself.
   */
  signature?:
    | string
    | undefined
    | ((covered: { seq: number; seqs: number[]; pauses?: string[] }) => string | undefined);
}

/**
 * The reason an adapter puts on its framework's approval request when Code Mode paused (AI SDK
 * `tool-approval-request`, a LangChain interrupt…): what waits, for the human — every action the
 * request covers, one per line when there are several (R-AP-8) — then a marker naming the
 * execution and those seqs, so the answer — possibly in another process, from a client that
 * sends the conversation back — can become `runtime.decide` on exactly those actions. With a
 * `signature` (`signPauseApproval`), the marker carries the server's signature over the set,
 * without which a chat's answer is refused (R-AP-11). The text stays short: with several
 * actions, each one's arguments get a share of 2 000 characters (at least 80 each).
 *
 * @example
 * pauseApprovalReason(outcome, { signature: ({ seq, seqs }) => signPauseApproval(runtime, { executionId, toolCallId, seq, seqs }, code) });
 * // 'Approve shop.create_order({"sku":"mug"})? [codemode execution 3f…e1 seq 2 sig Qm9v…]'
 * // with two pending actions:
 * // 'Approve these 2 actions?\n1. shop.create_order({"sku":"mug"})\n2. shop.create_order({"sku":"pen"}) [codemode execution 3f…e1 seq 2,3 sig …]'
 */
export function pauseApprovalReason(
  outcome: Extract<Outcome, { status: "paused" }>,
  options: PauseApprovalReasonOptions = {},
): string {
  const wanted = options.seqs ? new Set(options.seqs) : undefined;
  const covered = outcome.pending
    .filter((action) => !wanted || wanted.has(action.seq))
    .sort((a, b) => a.seq - b.seq)
    .filter((action, index, sorted) => index === 0 || action.seq !== sorted[index - 1]!.seq)
    .slice(0, MAX_REQUEST_ACTIONS);
  const seqs = covered.map((action) => action.seq);
  // Each action's pause, when every one has a well-formed id (the runtime gives each one).
  const pauses = covered.every((action) => isPauseIdOf(action.seq, action.pauseId))
    ? covered.map((action) => action.pauseId as string)
    : undefined;
  const signature =
    typeof options.signature === "function"
      ? seqs.length > 0
        ? options.signature({ seq: seqs[0]!, seqs, ...(pauses ? { pauses } : {}) })
        : undefined
      : options.signature;
  const signed = signature && /^[A-Za-z0-9_-]{1,128}$/.test(signature) ? ` sig ${signature}` : "";
  const shown = seqs.length > 0 ? (pauses ?? seqs).join(",") : 0;
  const marker = `[codemode execution ${outcome.executionId} seq ${shown}${signed}]`;
  return `${requestText(covered, outcome.pending.length - covered.length)} ${marker}`;
}

/** What people read: the action, or the actions numbered one per line, and how many are left out. */
function requestText(covered: PendingAction[], others: number): string {
  let text: string;
  if (covered.length === 0) text = "Approve the pending action?";
  else if (covered.length === 1) text = `Approve ${describePendingAction(covered[0]!)}?`;
  else {
    const room = Math.min(500, Math.max(80, Math.floor(REQUEST_ARGS_CHARS / covered.length)));
    const lines = covered.map((action, index) => `${index + 1}. ${describePendingAction(action, room)}`);
    text = `Approve these ${covered.length} actions?\n${lines.join("\n")}`;
  }
  if (others <= 0 || covered.length === 0) return text;
  return `${text}\n(${others} more pending action${others === 1 ? " is" : "s are"} not part of this request and decided separately.)`;
}

/**
 * The part of an approval reason meant for people: `pauseApprovalReason`'s text without the
 * trailing `[codemode execution … seq …]` marker (of one seq or several), which only adapters
 * read. Any other reason comes back as it is. Show this in approval screens
 * (`part.approval.requestReason` in useChat).
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
 * Reads back what `pauseApprovalReason` wrote (markers of one seq, as older versions wrote them,
 * too); undefined for any other text, and for a set that is not strictly ascending (no version
 * writes one). The reason travels through the client, so treat the answer as a claim:
 * `checkChatDecision` before deciding on it.
 */
export function readPauseReference(reason: unknown): PauseReference | undefined {
  if (typeof reason !== "string") return undefined;
  const match = MARKER.exec(reason);
  if (!match) return undefined;
  const tokens = match[2]!.split(",");
  const seqs = tokens.map((token) => Number(token.split(".")[0]));
  if (seqs.some((seq, index) => index > 0 && seq <= seqs[index - 1]!)) return undefined;
  // Pause ids for every action, or for none (requests written before pause ids): no version mixes them.
  const withPause = tokens.filter((token) => token.includes(".")).length;
  if (withPause !== 0 && withPause !== tokens.length) return undefined;
  return {
    executionId: match[1]!,
    seq: seqs[0]!,
    ...(seqs.length > 1 ? { seqs } : {}),
    ...(withPause > 0 ? { pauses: tokens } : {}),
    ...(match[3] ? { signature: match[3] } : {}),
  };
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
