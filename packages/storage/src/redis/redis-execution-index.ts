import { ALL_STATUSES, type ExecutionIndexProvider, type IndexRow } from "@codemode/core/store";
import { checkedIndexProvider } from "../execution-index/checked-index.js";
import { mergePages } from "../execution-index/index-rows.js";

/** The Redis command the index needs; a node-redis client (v5) has it. */
export interface RedisIndexClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

// Layout, per runtime name (`cm:<name>:ix…` under the storage's prefix):
// - one sorted set per status, every score 0 and each member `<createdAt, 16 digits>:<id>`, so
//   that the members' byte order is (createdAt, id) and a page starts exactly after a cursor with
//   `ZRANGE … BYLEX` — a score of createdAt would leave ties to be skipped one by one;
// - one hash from id to `<status> <createdAt, 16 digits> <updatedAt>`: where the execution is
//   listed (so a move finds its old row whatever `previous` says) and its updatedAt. Each write
//   touches one field, O(1).
// Every operation is one script: one round trip, atomic, so the sets and the hash never disagree.

/** Lua table from a status to its sorted set's position in KEYS (the hash is KEYS[1]). */
const SLOTS = `{${ALL_STATUSES.map((status, position) => `${status}=${position + 2}`).join(", ")}}`;

// KEYS: the hash, then the sorted sets of ALL_STATUSES. ARGV: id, status, createdAt (16 digits), updatedAt.
const PUT = `local slots = ${SLOTS}
local old = redis.call("HGET", KEYS[1], ARGV[1])
if old then
  local status, created = string.match(old, "^(%S+) (%S+) ")
  redis.call("ZREM", KEYS[slots[status]], created .. ":" .. ARGV[1])
end
redis.call("ZADD", KEYS[slots[ARGV[2]]], 0, ARGV[3] .. ":" .. ARGV[1])
redis.call("HSET", KEYS[1], ARGV[1], ARGV[2] .. " " .. ARGV[3] .. " " .. ARGV[4])
return 1`;

// PUT by a lease's holder. KEYS as for PUT, then the lease's key; ARGV as for PUT, then its token.
const PUT_IF_HELD = `if redis.call("GET", KEYS[#KEYS]) ~= ARGV[5] then return 0 end
${PUT}`;

// KEYS as for PUT. ARGV: id, the status the caller saw it listed under.
const REMOVE = `local slots = ${SLOTS}
local old = redis.call("HGET", KEYS[1], ARGV[1])
if not old then return 0 end
local status, created = string.match(old, "^(%S+) (%S+) ")
if status ~= ARGV[2] then return 0 end
redis.call("ZREM", KEYS[slots[status]], created .. ":" .. ARGV[1])
redis.call("HDEL", KEYS[1], ARGV[1])
return 1`;

// KEYS: the hash, then the sorted sets to list. ARGV: "newest" | "oldest", limit, cursor member or "".
// Answers per set a flat list: member, hash value, member, hash value, …
const LIST = `local pages = {}
for i = 2, #KEYS do
  local members
  if ARGV[1] == "newest" then
    members = redis.call("ZRANGE", KEYS[i], ARGV[3] == "" and "+" or "(" .. ARGV[3], "-", "BYLEX", "REV", "LIMIT", 0, ARGV[2])
  else
    members = redis.call("ZRANGE", KEYS[i], ARGV[3] == "" and "-" or "(" .. ARGV[3], "+", "BYLEX", "LIMIT", 0, ARGV[2])
  end
  local page = {}
  for _, member in ipairs(members) do
    page[#page + 1] = member
    page[#page + 1] = redis.call("HGET", KEYS[1], string.sub(member, 18)) or ""
  end
  pages[#pages + 1] = page
end
return pages`;

const COUNT = `local total = 0
for i = 1, #KEYS do total = total + redis.call("ZCARD", KEYS[i]) end
return total`;

/**
 * The execution index in Redis: a sorted set per (runtime name, status) and a hash of rows per
 * runtime name, under `keyPrefix` (the storage's namespace). A move, a removal, a page and a
 * count are one script each, so one round trip; a move costs O(log n) on the server and a page
 * O(statuses × (log n + limit)). Rejects when Redis cannot be reached.
 *
 * `createdAt` must be a millisecond timestamp (a non-negative safe integer); ids are ordered by
 * their bytes, which for ASCII ids (UUIDs) is the order of `compareRows`.
 *
 * A put with a fence checks, in its script, that the lease named by the fence still holds its
 * key (`lockKeyPrefix` + the fence's key, the layout of `createRedisLock`): a lapsed holder lists
 * nothing.
 *
 * @example
 * const provider = createRedisExecutionIndex(client, { keyPrefix: "codemode::" });
 * const index = provider.forRuntime("default");
 * await index.put({ id, status: "paused", createdAt, updatedAt: Date.now() }, "running");
 */
export function createRedisExecutionIndex(
  client: RedisIndexClient,
  options: { keyPrefix?: string; lockKeyPrefix?: string } = {},
): ExecutionIndexProvider {
  const prefix = options.keyPrefix ?? "";
  const lockPrefix = options.lockKeyPrefix ?? prefix;
  const hashOf = (runtimeName: string) => `${prefix}cm:${runtimeName}:ix`;
  const setOf = (runtimeName: string, status: IndexRow["status"]) => `${hashOf(runtimeName)}:${status}`;
  const allKeys = (runtimeName: string) => [
    hashOf(runtimeName),
    ...ALL_STATUSES.map((status) => setOf(runtimeName, status)),
  ];
  return checkedIndexProvider({
    async put(runtimeName, row, fence) {
      const values = [row.id, row.status, digits(row.createdAt), String(row.updatedAt)];
      if (fence)
        await client.eval(PUT_IF_HELD, {
          keys: [...allKeys(runtimeName), lockPrefix + fence.key],
          arguments: [...values, fence.token],
        });
      else await client.eval(PUT, { keys: allKeys(runtimeName), arguments: values });
    },
    async remove(runtimeName, row) {
      await client.eval(REMOVE, { keys: allKeys(runtimeName), arguments: [row.id, row.status] });
    },
    async list(runtimeName, page) {
      if (page.limit === 0 || page.statuses.length === 0) return [];
      const cursor = page.after ? `${digits(page.after.createdAt)}:${page.after.id}` : "";
      const answer = await client.eval(LIST, {
        keys: [hashOf(runtimeName), ...page.statuses.map((status) => setOf(runtimeName, status))],
        arguments: [page.order, String(page.limit), cursor],
      });
      if (!Array.isArray(answer))
        throw new Error(`unexpected answer from Redis to an index listing: ${JSON.stringify(answer)}`);
      const pages = page.statuses.map((status, position) => rowsOf(answer[position], status));
      return mergePages(pages, page.order, page.limit);
    },
    async count(runtimeName, statuses) {
      const wanted = [...new Set(statuses)];
      if (wanted.length === 0) return 0;
      return Number(
        await client.eval(COUNT, { keys: wanted.map((status) => setOf(runtimeName, status)), arguments: [] }),
      );
    },
  });
}

/** A timestamp as 16 digits, so that byte order is numeric order (Number.MAX_SAFE_INTEGER has 16). */
function digits(time: number): string {
  return String(time).padStart(16, "0");
}

/** Rows from one status's flat list of member, hash value pairs. */
function rowsOf(flat: unknown, status: IndexRow["status"]): IndexRow[] {
  if (!Array.isArray(flat))
    throw new Error(`unexpected answer from Redis to an index listing: ${JSON.stringify(flat)}`);
  const rows: IndexRow[] = [];
  for (let at = 0; at + 1 < flat.length; at += 2) {
    const member = String(flat[at]);
    const createdAt = Number(member.slice(0, 16));
    // The hash is written in the same script as the set, so its value is there; createdAt stands in if not.
    const updatedAt = Number(String(flat[at + 1]).split(" ")[2] ?? createdAt);
    rows.push({
      id: member.slice(17),
      status,
      createdAt,
      updatedAt: Number.isFinite(updatedAt) ? updatedAt : createdAt,
    });
  }
  return rows;
}
