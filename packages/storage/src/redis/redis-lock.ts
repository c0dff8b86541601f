import type { Lease, LockProvider } from "@codemode/core/store";
import { acquireByPolling, localWaiting, wholeTtlMs } from "../lock/acquire-by-polling.js";
import type { StoredRows } from "../lock/stored-rows.js";

/** The Redis commands the lock needs; a node-redis client (v5) has them. */
export interface RedisLockClient {
  set(
    key: string,
    value: string,
    options: { condition: "NX"; expiration: { type: "PX"; value: number } },
  ): Promise<string | null>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  exists(key: string): Promise<number>;
}

// Both scripts act only while the key still holds this lease's token: a lease that lapsed and
// was taken by another process can neither extend nor free the new owner's lock.
const RENEW = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`;
// The fenced write. KEYS: the lock, then the keys to set; ARGV: the token, then their values.
// Writes nothing unless the lease still holds the lock (an expired key reads as absent).
const SET_IF_HELD = `if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
for i = 2, #KEYS do redis.call("SET", KEYS[i], ARGV[i]) end
return 1`;

/**
 * Leases in Redis, shared by every process that uses the same server (R-ST-4): `SET key token
 * NX PX ttl` takes a lock; renew and release run as Lua scripts that check the token first.
 * Expiry is Redis's own clock, so hosts with drifting clocks still agree on who holds a key.
 * `renew` answers false once the token no longer owns the key (lapsed, or taken by another);
 * every method rejects when Redis cannot be reached.
 *
 * Given `rows` (how the storage's Keyv stores its entries), leases offer the fenced write
 * (`setIfHeld`): one script that checks the token and sets the keys, so a lapsed holder can write
 * nothing. Every key must be on this server (not a Redis Cluster: one script, one slot).
 *
 * @example
 * const lock = createRedisLock(client, { keyPrefix: "codemode::" });
 * const lease = await lock.acquire("job-7", { ttlMs: 30_000, waitMs: 5_000 });
 * if (lease) try { ... } finally { await lease.release(); }
 */
export function createRedisLock(
  client: RedisLockClient,
  options: { keyPrefix?: string; rows?: StoredRows } = {},
): LockProvider {
  const prefix = options.keyPrefix ?? "";
  const local = localWaiting();
  return {
    async acquire(key, { ttlMs, waitMs }) {
      const redisKey = prefix + key;
      const expiration = { type: "PX" as const, value: wholeTtlMs(ttlMs) };
      return acquireByPolling(
        redisKey,
        async (token) => {
          const answer = await client.set(redisKey, token, { condition: "NX", expiration });
          return answer === "OK"
            ? redisLease(client, redisKey, token, () => local.wakeups.wake(redisKey), options.rows)
            : null;
        },
        waitMs,
        local,
      );
    },
    async isHeld(key) {
      return (await client.exists(prefix + key)) === 1;
    },
  };
}

function redisLease(
  client: RedisLockClient,
  redisKey: string,
  token: string,
  released: () => void,
  rows: StoredRows | undefined,
): Lease {
  const lease: Lease = {
    token,
    async renew(ttlMs) {
      const answer = await client.eval(RENEW, {
        keys: [redisKey],
        arguments: [token, String(wholeTtlMs(ttlMs))],
      });
      return Number(answer) === 1;
    },
    async release() {
      await client.eval(RELEASE, { keys: [redisKey], arguments: [token] });
      released();
    },
  };
  if (rows) {
    lease.setIfHeld = async (entries) => {
      const stored = await rows(entries);
      const answer = await client.eval(SET_IF_HELD, {
        keys: [redisKey, ...stored.map((row) => row.key)],
        arguments: [token, ...stored.map((row) => row.value)],
      });
      return Number(answer) === 1;
    };
  }
  return lease;
}
