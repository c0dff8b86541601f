// The generic execution index over any Keyv store, with only get/set/delete and their batches.
//
// Layout, per runtime name, status and shard (shard = FNV-1a of the id mod 16), a time trie:
//   cm:<name>:x:<status>:<shard>            root: {<level-2 prefix>: rows}, an entry per ~45 days
//   cm:<name>:x:<status>:<shard>:2:<prefix> ~45 days: {<0–255>: rows} per 256-minute span
//   cm:<name>:x:<status>:<shard>:1:<prefix> 256 minutes: {<0–255>: rows} per minute
//   cm:<name>:x:<status>:<shard>:0:<minute> page: [[id, createdAt, updatedAt], …] in (createdAt, id) order
//   cm:<name>:lock:x:<status>:<shard>       the lease for rewriting that list
// (minute = floor(createdAt / 60 s); a level-L prefix = floor(minute / 256^L)).
// A row's keys follow from its status, id and createdAt alone, so a write reads its whole path in
// one batch. Every node holds at most 256 entries, so what a write reads and rewrites is bounded
// whatever the history; only the root grows, by one entry per 45 days of retained history.
// Empty pages and directories are deleted.
//
// Round trips (besides acquiring and releasing the one or two list leases):
//   put, remove  1 getMany (4 keys; 8 for a move) + at most 1 setMany + at most 1 deleteMany
//   list         1 getMany (every list's root, and its two directories on the path of the cursor
//                or of now) + 1 getMany of pages; up to 4 when the page lies off that path, one
//                more per level only when a crash left counts stale
//   count        1 getMany of roots
import { CodemodeError, type ExecutionStatus } from "../outcome.js";
import { compareRows, type ExecutionIndex, type IndexQuery, type IndexRow } from "./execution-index.js";
import { checkQuery, checkRow, checkStatus, isTime } from "./index-input.js";
import type { KeyvLike } from "./interface.js";
import { storeKeys } from "./keys.js";
import { keyvAccess } from "./keyv-access.js";
import type { Lease, LockProvider } from "./lock.js";

/** Lists per status: writers of different executions rarely wait on the same lease. */
const SHARDS = 16;
/** A page holds one minute of one list. */
const BUCKET_MS = 60_000;
/** Entries per directory: bounds what a write rewrites. */
const FANOUT = 256;
/** Levels: 0 pages, 1 and 2 directories, 3 the root. */
const ROOT = 3;
/** The runtime's defaults (runtime-options.ts), kept here so the log layer does not import the runtime. */
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_LOCK_WAIT_MS = 5_000;

interface NodeRef {
  status: ExecutionStatus;
  shard: number;
  level: number;
  /** The node's span in minutes is [prefix × 256^level, (prefix + 1) × 256^level); 0 for the root. */
  prefix: number;
}

/** What a listing knows at one step: a row, or a node not read yet with the rows its parent counts under it. */
type Item = { row: IndexRow } | { node: NodeRef; count: number };

/** A place in (createdAt, id) order; `edge` stands before (-1) or after (1) every id at that millisecond. */
type Position = { createdAt: number; id: string; edge?: -1 | 1 };

/**
 * The execution index for stores with no native listing: rows kept in small keys of `keyv`, so
 * that a status change costs a fixed number of round trips and bytes and a page costs O(limit),
 * however many executions are stored. Each (status, shard) list is rewritten under its own
 * lease from `lock`; a lease that stays busy past `lockWaitMs` is BUSY, a store failure is
 * STORAGE_ERROR (never an empty page).
 *
 * @example
 * const index = createKeyvExecutionIndex(new Keyv(), "default", createInProcessLock());
 * await index.put({ id, status: "paused", createdAt, updatedAt: Date.now() }, "running");
 * const page = await index.list({ statuses: ["paused"], limit: 20 });
 */
export function createKeyvExecutionIndex(
  keyv: KeyvLike,
  runtimeName: string,
  lock: LockProvider,
  options: {
    /** How long a list's lease lasts if its holder dies mid-write. Default 30 s. */
    leaseMs?: number;
    /** How long a write waits for a list's lease before it is BUSY. Default 5 s. */
    lockWaitMs?: number;
  } = {},
): ExecutionIndex {
  const leaseMs = positive(options.leaseMs ?? DEFAULT_LEASE_MS, "leaseMs");
  const lockWaitMs = positive(options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS, "lockWaitMs");
  const keys = storeKeys(runtimeName);
  const store = storeAccess(keyv);
  const nodeKey = (ref: NodeRef) =>
    keys.indexList(ref.status, ref.shard, ref.level === ROOT ? undefined : `${ref.level}:${ref.prefix}`);

  /** Rewrites the path of one row in each list named by `changes`, holding those lists' leases. */
  const change = async (
    row: { id: string; createdAt: number; updatedAt?: number },
    changes: Array<{ status: ExecutionStatus; add: boolean }>,
  ) => {
    const shard = shardOf(row.id);
    const bucket = Math.floor(row.createdAt / BUCKET_MS);
    const paths = changes.map(({ status }) => [0, 1, 2, ROOT].map((level) => refAt(status, shard, level, bucket)));
    const lockKeys = [...new Set(changes.map(({ status }) => keys.indexListLock(status, shard)))].sort();
    await withLeases(store, lock, lockKeys, { ttlMs: leaseMs, waitMs: lockWaitMs }, async (stillHeld) => {
      const pathKeys = paths.map((path) => path.map(nodeKey));
      const values = await store.getMany(pathKeys.flat());
      const writes: Array<{ key: string; value: string }> = [];
      const deletes: string[] = [];
      changes.forEach(({ status, add }, which) => {
        const before = values.slice(which * 4, which * 4 + 4);
        const after = rewritePath(paths[which]!, before, (rows) => {
          const others = rows.filter((listed) => listed.id !== row.id);
          if (add)
            others.push({ id: row.id, status, createdAt: row.createdAt, updatedAt: row.updatedAt ?? row.createdAt });
          return others.sort(compareRows);
        });
        after.forEach((text, level) => {
          const key = pathKeys[which]![level]!;
          if (text === undefined && before[level] !== undefined && before[level] !== null) deletes.push(key);
          else if (text !== undefined && text !== before[level]) writes.push({ key, value: text });
        });
      });
      if (deletes.length === 0 && writes.length === 0) return;
      await stillHeld();
      // Writes first, the new status's list first in the batch: a crash between never leaves a
      // moved execution listed nowhere; at worst an unlisted page keeps rows for readers to repair.
      if (writes.length > 0) await store.setMany(writes);
      if (deletes.length > 0) await store.deleteMany(deletes);
    });
  };

  const list = async (query: IndexQuery): Promise<IndexRow[]> => {
    const { statuses, limit, order, after } = checkQuery(query);
    if (limit === 0 || statuses.length === 0) return [];
    const direction = order === "oldest" ? 1 : -1;
    const roots = statuses.flatMap((status) =>
      Array.from({ length: SHARDS }, (_, shard) => refAt(status, shard, ROOT, 0)),
    );
    const cache = new Map<string, unknown>();
    const load = async (refs: NodeRef[]) => {
      const missing = [...new Set(refs.map(nodeKey))].filter((key) => !cache.has(key));
      if (missing.length === 0) return;
      const values = await store.getMany(missing);
      for (const [index, key] of missing.entries()) cache.set(key, values[index]);
    };
    // The page most often starts near the cursor (or, newest first, near now): read those
    // directories with the roots, so that the second read is of pages.
    const start = after?.createdAt ?? (order === "newest" ? Date.now() : undefined);
    const guesses =
      start === undefined
        ? []
        : roots.flatMap((root) =>
            [2, 1].map((level) => refAt(root.status, root.shard, level, Math.floor(start / BUCKET_MS))),
          );
    await load([...roots, ...guesses]);
    let items = roots.flatMap((root) => childrenOf(root, cache.get(nodeKey(root))));
    // Each turn replaces the nodes that can hold the page's rows by their children, reading only
    // what is not cached: one read per level at most, until rows alone decide the page.
    for (;;) {
      const plan = planPage(items, limit, direction, after);
      if (plan.expand.length === 0) return plan.rows;
      await load(plan.expand);
      items = [...plan.keep, ...plan.expand.flatMap((ref) => childrenOf(ref, cache.get(nodeKey(ref))))];
    }
  };

  return {
    async put(row, previous) {
      checkRow(row);
      if (previous !== undefined) checkStatus(previous);
      const changes = [{ status: row.status, add: true }];
      // Listed under the new status first: a crash between shows the execution twice, never not at all.
      if (previous !== undefined && previous !== row.status) changes.push({ status: previous, add: false });
      await change(row, changes);
    },
    async remove(row) {
      checkRow(row);
      await change(row, [{ status: row.status, add: false }]);
    },
    list,
    async count(statuses) {
      for (const status of statuses) checkStatus(status);
      const roots = [...new Set(statuses)].flatMap((status) =>
        Array.from({ length: SHARDS }, (_, shard) => refAt(status, shard, ROOT, 0)),
      );
      if (roots.length === 0) return 0;
      const values = await store.getMany(roots.map(nodeKey));
      let total = 0;
      values.forEach((value, index) => {
        for (const count of readDirectory(value, roots[index]!).values()) total += count;
      });
      return total;
    },
  };
}

/**
 * The new texts of a row's path (page, level 1, level 2, root) after `edit` changed its page;
 * undefined where the node is now empty. Every count on the path is recomputed from the node
 * below, so a write also repairs counts a crash left stale on that path.
 */
function rewritePath(
  path: NodeRef[],
  texts: unknown[],
  edit: (rows: IndexRow[]) => IndexRow[],
): Array<string | undefined> {
  const rows = edit(readPage(texts[0], path[0]!));
  const result: Array<string | undefined> = [
    rows.length > 0 ? JSON.stringify(rows.map((row) => [row.id, row.createdAt, row.updatedAt])) : undefined,
  ];
  let total = rows.length;
  for (let level = 1; level <= ROOT; level++) {
    const entries = readDirectory(texts[level], path[level]!);
    const index = childIndex(path[level]!, path[level - 1]!);
    if (total > 0) entries.set(index, total);
    else entries.delete(index);
    total = 0;
    for (const count of entries.values()) total += count;
    // Integer keys keep ascending order in a JSON object, so an unchanged node has the same text.
    result.push(total > 0 ? JSON.stringify(Object.fromEntries(entries)) : undefined);
  }
  return result;
}

/**
 * Which nodes may hold rows of the page, given what is known: walking items from the cursor in
 * `direction`, the rows known to follow it (rows, and counts of nodes wholly past it) reach
 * `limit` by some position (or all items are passed); every node starting before that position
 * is read next. With none left, the rows decide the page. Counts only steer what is read: a
 * count left wrong by a crash costs a read, never a row.
 */
function planPage(items: Item[], limit: number, direction: 1 | -1, after: Position | undefined) {
  const compare = (a: Position, b: Position) => direction * comparePositions(a, b);
  const edges = (item: Item): [Position, Position] => {
    if ("row" in item) return [item.row, item.row];
    const [low, high] = spanOf(item.node);
    const first: Position = { createdAt: low, id: "", edge: -1 };
    const last: Position = { createdAt: high, id: "", edge: 1 };
    return direction === 1 ? [first, last] : [last, first];
  };
  const relevant = items
    .map((item) => ({ item, edges: edges(item) }))
    .filter(({ edges: [, end] }) => after === undefined || compare(end, after) > 0)
    .sort((a, b) => compare(a.edges[0], b.edges[0]));
  let known = 0;
  let cutoff: Position | undefined;
  for (const {
    item,
    edges: [start, end],
  } of relevant) {
    if (cutoff === undefined || compare(end, cutoff) > 0) cutoff = end;
    known += "row" in item ? 1 : after !== undefined && compare(start, after) <= 0 ? 0 : item.count;
    if (known >= limit) break;
  }
  const expand: NodeRef[] = [];
  const keep: Item[] = [];
  for (const {
    item,
    edges: [start],
  } of relevant) {
    if ("node" in item && (cutoff === undefined || compare(start, cutoff) <= 0)) expand.push(item.node);
    else keep.push(item);
  }
  const rows = expand.length > 0 ? [] : keep.flatMap((item) => ("row" in item ? [item.row] : [])).slice(0, limit);
  return { expand, keep, rows };
}

/** The children of a node as read from the store: nodes with their counts, or a page's rows. */
function childrenOf(ref: NodeRef, value: unknown): Item[] {
  if (ref.level === 0) return readPage(value, ref).map((row) => ({ row }));
  return [...readDirectory(value, ref)].map(([index, count]) => ({
    node: {
      status: ref.status,
      shard: ref.shard,
      level: ref.level - 1,
      prefix: ref.level === ROOT ? index : ref.prefix * FANOUT + index,
    },
    count,
  }));
}

function refAt(status: ExecutionStatus, shard: number, level: number, bucket: number): NodeRef {
  return { status, shard, level, prefix: level === ROOT ? 0 : Math.floor(bucket / FANOUT ** level) };
}

/** A child's entry in its parent: its offset in a directory, its prefix in the root. */
function childIndex(parent: NodeRef, child: NodeRef): number {
  return parent.level === ROOT ? child.prefix : child.prefix - parent.prefix * FANOUT;
}

/** First and last millisecond a node covers. */
function spanOf(ref: NodeRef): [number, number] {
  const width = FANOUT ** ref.level * BUCKET_MS;
  return [ref.prefix * width, (ref.prefix + 1) * width - 1];
}

function comparePositions(a: Position, b: Position): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  if (a.edge !== undefined || b.edge !== undefined) return (a.edge ?? 0) - (b.edge ?? 0);
  return compareRows(a, b);
}

/** FNV-1a: stable across processes and versions, since it decides where rows already stored live. */
function shardOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01000193);
  return (hash >>> 0) % SHARDS;
}

function readPage(value: unknown, ref: NodeRef): IndexRow[] {
  if (value === undefined || value === null) return [];
  const parsed = parseJson(value, "index page");
  if (!Array.isArray(parsed)) throw corrupt("index page");
  return parsed.map((entry: unknown) => {
    if (!Array.isArray(entry) || typeof entry[0] !== "string" || !isTime(entry[1]) || !isTime(entry[2]))
      throw corrupt("index page");
    return { id: entry[0], status: ref.status, createdAt: entry[1], updatedAt: entry[2] };
  });
}

function readDirectory(value: unknown, ref: NodeRef): Map<number, number> {
  const entries = new Map<number, number>();
  if (value === undefined || value === null) return entries;
  const parsed = parseJson(value, "index directory");
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw corrupt("index directory");
  for (const [key, count] of Object.entries(parsed)) {
    const index = Number(key);
    const inRange = Number.isSafeInteger(index) && index >= 0 && (ref.level === ROOT || index < FANOUT);
    if (!inRange || !Number.isSafeInteger(count) || (count as number) <= 0) throw corrupt("index directory");
    entries.set(index, count as number);
  }
  return entries;
}

/**
 * Takes every lease in `lockKeys` (in sorted order, so two writers never wait on each other),
 * runs `write`, and releases them. `write` calls `stillHeld` before writing: a lease that lapsed
 * while the store was slow may already be someone else's.
 */
async function withLeases(
  store: ReturnType<typeof storeAccess>,
  lock: LockProvider,
  lockKeys: string[],
  timing: { ttlMs: number; waitMs: number },
  write: (stillHeld: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const leases: Lease[] = [];
  const takenAt = Date.now();
  try {
    for (const key of lockKeys) {
      const lease = await store.guard("take an index lease", () => lock.acquire(key, timing));
      if (!lease)
        throw new CodemodeError("BUSY", `the execution index list ${key} stayed locked for ${timing.waitMs} ms`);
      leases.push(lease);
    }
    await write(async () => {
      if (Date.now() - takenAt < timing.ttlMs / 2) return;
      for (const lease of leases) {
        const renewed = await store.guard("renew an index lease", () => lease.renew(timing.ttlMs));
        if (!renewed) throw new CodemodeError("BUSY", "an execution index lease lapsed before the write");
      }
    });
  } finally {
    // A lease that fails to release lapses on its own; the write's outcome matters more.
    for (const lease of leases.reverse()) await lease.release().catch(() => undefined);
  }
}

/**
 * Store calls that fail as STORAGE_ERROR, as ExecutionStore's do: Keyv is told to throw, and
 * batches avoid the Keyv paths that turn a failed read into a missing key.
 */
function storeAccess(keyv: KeyvLike) {
  const access = keyvAccess(keyv);
  return {
    guard: access.guard,
    getMany: (keys: string[]) => access.getMany(keys, "read the execution index"),
    setMany: (entries: Array<{ key: string; value: string }>) => access.setMany(entries, "write the execution index"),
    deleteMany: (keys: string[]) => access.deleteMany(keys, "write the execution index"),
  };
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value))
    throw new TypeError(`${name} must be a positive number of milliseconds (got ${value})`);
  return value;
}

function parseJson(text: unknown, what: string): unknown {
  try {
    if (typeof text === "string") return JSON.parse(text);
  } catch {
    // Reported below, as text that is not JSON.
  }
  throw corrupt(what);
}

function corrupt(what: string): CodemodeError {
  return new CodemodeError("STORAGE_ERROR", `the store returned an ${what} that is not valid`);
}
