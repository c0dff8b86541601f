import { errorMessage } from "../error-message.js";
import { CodemodeError } from "../outcome.js";
import { isValueCodecError, valueCodec } from "../sandbox/prelude/value-codec.js";
import { CLIP_NOTE_CHARS, clipText } from "../sandbox/sandbox-limits.js";

/** Serialized characters allowed for code, arguments, recorded results and step results (R-DV-1). */
export const MAX_DURABLE_CHARS = 1_000_000;

/**
 * Characters kept of a message written to the log or handed to the model (a thrown error, a
 * step's or a tool's error, a refusal). Values are never cut (R-DV-1); messages are, with a note.
 */
export const MAX_MESSAGE_CHARS = 10_000;

/**
 * A message cut to `MAX_MESSAGE_CHARS` with a note of what was left out. A message the sandbox
 * already cut (its note included) is kept as it is, so it reads the same on every pass.
 */
export function clipMessage(text: string): string {
  return text.length > MAX_MESSAGE_CHARS + CLIP_NOTE_CHARS ? clipText(text, MAX_MESSAGE_CHARS) : text;
}

const ADVICE =
  "store the data elsewhere (a file, a bucket, a table) and pass a small reference such as a path or an id";

/** Throws VALUE_TOO_LARGE unless `text` fits the durable limit; values are never truncated. */
export function checkDurableSize(text: string, what: string): string {
  if (text.length > MAX_DURABLE_CHARS) throw tooLarge(what, text.length);
  return text;
}

/** The VALUE_TOO_LARGE error for a value of `chars` serialized characters (R-DV-1). */
export function tooLarge(what: string, chars: number): CodemodeError {
  return new CodemodeError(
    "VALUE_TOO_LARGE",
    `${what} is ${chars.toLocaleString("en")} characters once serialized, over the ${MAX_DURABLE_CHARS.toLocaleString("en")} limit for values kept for replay: ${ADVICE}`,
  );
}

/** Encodes a host value for the log; throws NOT_SERIALIZABLE or VALUE_TOO_LARGE as CodemodeError. */
export function encodeDurable(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = valueCodec.encode(value);
  } catch (error) {
    if (isValueCodecError(error)) throw new CodemodeError("NOT_SERIALIZABLE", `${what}: ${error.message}; ${ADVICE}`);
    throw new CodemodeError("NOT_SERIALIZABLE", `${what} could not be serialized (${errorMessage(error)}); ${ADVICE}`);
  }
  return checkDurableSize(text ?? "", what);
}

/** Decodes wire text kept in the log ("" is undefined). */
export function decodeDurable(text: string | undefined): unknown {
  return text === undefined || text === "" ? undefined : valueCodec.decode(text);
}
