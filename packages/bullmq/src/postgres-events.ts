import { type BackendFactory, createPostgresBackend, type IQueueBackend, type PostgresQueueBackend } from "bullmq";

/**
 * How long after a higher event id was read an event with a lower id may still become visible.
 * Ids come from a sequence when a transaction inserts the event; the transaction commits a
 * moment later, so concurrent commits can land out of id order (milliseconds, for BullMQ's job
 * transitions). Events are re-read over this window, and the ones already delivered skipped.
 */
const LATE_WINDOW_MS = 5_000;
/** The look back costs one indexed range read; at most this often, whatever the event rate. */
const LOOK_BACK_EVERY_MS = 250;
const READ_BATCH = 500;

type EventRow = { id: string; event: string; data: Record<string, unknown> | null };

/**
 * BullMQ's PostgreSQL backend with an event reader that does not lose events.
 *
 * BullMQ 6.7's reader pages the `event` table with `id > cursor`. Under concurrency a
 * transaction that drew a lower id can commit after one that drew a higher id and was already
 * read: the cursor has moved past it and that event is never delivered (measured here: 53 of
 * 400 `completed` events lost with two workers of concurrency 8). Lifecycle events feed approval
 * inboxes, so this reader also looks back over the last `LATE_WINDOW_MS` of ids (at most every
 * `LOOK_BACK_EVERY_MS`) for events it has not delivered, and delivers each event once. Everything else is BullMQ's backend unchanged.
 */
export const createPostgresBackendWithReliableEvents: BackendFactory<IQueueBackend, never> = (
  name,
  options,
  factoryOptions,
) => {
  const backend = createPostgresBackend(name, options as never, factoryOptions);
  retryableReadiness(backend);
  hearCheckedOutClients(backend.connection.pool as unknown as ClientPool);
  // Only QueueEvents (a "blocking" backend that is not a worker's) reads events.
  if (factoryOptions?.blocking) backend.readEvents = reliableEventReader(backend);
  return backend;
};

/**
 * BullMQ's PostgreSQL connection remembers its first readiness check, a failed one too: a worker
 * started while the database was down stayed unable to work after it came back. A failed check
 * is forgotten here, so the next `waitUntilReady` (the worker's, or its run loop's) tries again.
 */
function retryableReadiness(backend: PostgresQueueBackend): void {
  forgetFailure(backend.connection as unknown as Memoized);
  forgetFailure(backend as unknown as Memoized);
}

/** The part of a `pg.Pool` this file needs: its clients as they connect. */
interface ClientPool {
  on(event: "connect", listener: (client: { on(event: "error", listener: () => void): unknown }) => void): unknown;
}

const heard = new WeakSet<object>();

/**
 * A `pg` client checked out of the pool emits "error" when its connection fails between two
 * queries, and the pool listens only while the client is idle: BullMQ's readiness check holds
 * one across its migration queries, and a database restarting then ended a worker at start-up
 * with an uncaught "read ECONNRESET". Every client of the pool is heard: the query under way
 * fails with the error, and the pool drops the broken client when it is released.
 */
function hearCheckedOutClients(pool: ClientPool): void {
  if (heard.has(pool)) return;
  heard.add(pool);
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
}

/** Something whose `waitUntilReady` is memoized in `readyPromise`, failures included. */
interface Memoized {
  waitUntilReady(): Promise<void>;
  readyPromise?: Promise<void> | undefined;
}

function forgetFailure(target: Memoized): void {
  const check = target.waitUntilReady.bind(target);
  target.waitUntilReady = () =>
    check().catch((error: unknown) => {
      target.readyPromise = undefined;
      throw error;
    });
}

function reliableEventReader(backend: PostgresQueueBackend): PostgresQueueBackend["readEvents"] {
  const waitForNewer = backend.readEvents.bind(backend);
  const queue = (backend as unknown as { queueName: string }).queueName;
  const select = async (where: string, values: unknown[]): Promise<EventRow[]> => {
    await backend.connection.waitUntilReady();
    const result = (await backend.connection.pool.query(
      `SELECT id, event, data FROM event WHERE queue = $1 AND ${where} ORDER BY id ASC LIMIT ${READ_BATCH}`,
      [queue, ...values],
    )) as unknown as {
      rows: EventRow[];
    };
    return result.rows;
  };
  /** High-water marks over time; the one from LATE_WINDOW_MS ago is where the look back starts. */
  const marks: Array<{ at: number; high: number }> = [];
  /** Ids delivered within the window, so the look back skips them. */
  const delivered = new Map<number, number>();
  let high: number | undefined;
  let lastLookBack = 0;

  /** Events below the high-water mark that were not visible when it passed them (rare). */
  const late = async (now: number): Promise<EventRow[]> => {
    while (marks.length > 1 && (marks[1] as { at: number }).at <= now - LATE_WINDOW_MS) marks.shift();
    const floor = marks[0] as { at: number; high: number };
    for (const [id, at] of delivered) if (at < floor.at) delivered.delete(id);
    if (floor.high >= (high as number) || now - lastLookBack < LOOK_BACK_EVERY_MS) return [];
    lastLookBack = now;
    return select("id > $2 AND id <= $3 AND NOT (id = ANY($4::bigint[]))", [floor.high, high, [...delivered.keys()]]);
  };
  const read = async (): Promise<EventRow[]> => {
    const rows = [...(await late(Date.now())), ...(await select("id > $2", [high]))];
    return rows.sort((a, b) => Number(a.id) - Number(b.id));
  };

  return async (_cursor, blockTimeout) => {
    if (backend.closing || backend.connection.isClosing) return null;
    if (high === undefined) {
      // Like BullMQ's "$": events from now on.
      await backend.connection.waitUntilReady();
      const { rows } = (await backend.connection.pool.query(
        "SELECT COALESCE(MAX(id), 0)::bigint AS max FROM event WHERE queue = $1",
        [queue],
      )) as unknown as { rows: Array<{ max: string }> };
      high = Number(rows[0]?.max ?? 0);
      marks.push({ at: Date.now(), high });
    }
    let events = await read();
    if (events.length === 0) {
      // BullMQ's own read blocks on LISTEN/NOTIFY until an id above ours appears, or the timeout;
      // bounded here so a late event waits at most one short block.
      await waitForNewer(String(high), Math.min(blockTimeout, LATE_WINDOW_MS / 5));
      if (backend.closing || backend.connection.isClosing) return null;
      events = await read();
    }
    if (events.length === 0) return null;
    const now = Date.now();
    for (const event of events) {
      delivered.set(Number(event.id), now);
      high = Math.max(high, Number(event.id));
    }
    marks.push({ at: now, high });
    // Redis XREAD's shape, which QueueEvents decodes: [[stream, [[id, [field, value, ...]], ...]]].
    return [["events", events.map((event) => [String(event.id), fieldsOf(event)])]] as never;
  };
}

function fieldsOf(event: EventRow): string[] {
  const fields = ["event", event.event];
  for (const [key, value] of Object.entries(event.data ?? {}))
    fields.push(key, typeof value === "string" ? value : String(value));
  return fields;
}
