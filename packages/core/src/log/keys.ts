/**
 * Store keys. Short on purpose: SQL adapters keep keys in VARCHAR(255). Every key starts with
 * the runtime's name so runtimes sharing a store never see each other's data.
 */
export function storeKeys(runtimeName: string) {
  const base = `cm:${runtimeName}`;
  return {
    head: (executionId: string) => `${base}:h:${executionId}`,
    code: (executionId: string) => `${base}:c:${executionId}`,
    result: (executionId: string) => `${base}:r:${executionId}`,
    entry: (executionId: string, seq: number) => `${base}:e:${executionId}:${seq}`,
    /** A request to cancel a running execution, read by the process whose pass runs it. */
    cancel: (executionId: string) => `${base}:k:${executionId}`,
    snippets: `${base}:snippets`,
    lock: (executionId: string) => `${base}:lock:${executionId}`,
    snippetsLock: `${base}:lock:snippets`,
    /**
     * One (status, shard) list of the generic execution index (kv-execution-index.ts): its root,
     * or with `node` (`<level>:<prefix>`) one of its directories or pages. Ids never enter these
     * keys, so their length does not depend on the caller's ids.
     */
    indexList: (status: string, shard: number, node?: string) =>
      `${base}:x:${status}:${shard}${node === undefined ? "" : `:${node}`}`,
    /** The lease for rewriting one (status, shard) list: one of ~96, never one for every execution. */
    indexListLock: (status: string, shard: number) => `${base}:lock:x:${status}:${shard}`,
  };
}
export type StoreKeys = ReturnType<typeof storeKeys>;
