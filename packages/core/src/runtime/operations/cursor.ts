/**
 * Listing cursors: the position of the last row of a page, (createdAt, id), as opaque text. A
 * cursor stays valid while rows change: the next page starts strictly after that position.
 */
export function encodeCursor(position: { createdAt: number; id: string }): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
}

/** A cursor that this listing did not make is a host programming error: it throws a TypeError. */
export function decodeCursor(cursor: unknown): { createdAt: number; id: string } {
  const invalid = () =>
    new TypeError(
      `cursor ${JSON.stringify(String(cursor).slice(0, 80))} is not a cursor from a listing of this runtime`,
    );
  if (typeof cursor !== "string" || cursor.length > 400) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== "number" ||
    !Number.isFinite(parsed[0]) ||
    typeof parsed[1] !== "string"
  )
    throw invalid();
  return { createdAt: parsed[0], id: parsed[1] };
}
