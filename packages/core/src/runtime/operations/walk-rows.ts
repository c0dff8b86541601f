import type { IndexRow } from "../../log/execution-index.js";
import type { ExecutionStatus } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";

const PAGE = 100;

/**
 * The rows listed under one status, oldest first, a page at a time, while `more` holds. Pages
 * follow a cursor, so changing rows already yielded (expiring, recovering them) loses none.
 */
export async function* rowsOldestFirst(
  context: RuntimeContext,
  status: ExecutionStatus,
  more: (row: IndexRow) => boolean = () => true,
): AsyncGenerator<IndexRow> {
  let after: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await context.index.list({
      statuses: [status],
      order: "oldest",
      limit: PAGE,
      ...(after ? { after } : {}),
    });
    for (const row of page) {
      if (!more(row)) return;
      yield row;
    }
    if (page.length < PAGE) return;
    const last = page[page.length - 1] as IndexRow;
    after = { createdAt: last.createdAt, id: last.id };
  }
}
