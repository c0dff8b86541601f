/**
 * Why an aborted pass ended, for its SANDBOX_ERROR: the abort's reason when it is text or an
 * error of the caller's, otherwise a plain sentence (an `AbortError` names no cause).
 */
export function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (typeof reason === "string") return reason;
  if (reason instanceof Error && reason.name !== "AbortError") return reason.message;
  return "the pass was aborted";
}
