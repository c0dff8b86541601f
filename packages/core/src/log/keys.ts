/**
 * Store keys. Short on purpose: SQL adapters keep keys in VARCHAR(255). Every key starts with
 * the runtime's name so runtimes sharing a store never see each other's data.
 */
export function storeKeys(runtimeName: string) {
  const base = `cm:${runtimeName}`;
  return {
    index: `${base}:index`,
    head: (executionId: string) => `${base}:h:${executionId}`,
    code: (executionId: string) => `${base}:c:${executionId}`,
    result: (executionId: string) => `${base}:r:${executionId}`,
    entry: (executionId: string, seq: number) => `${base}:e:${executionId}:${seq}`,
    snippets: `${base}:snippets`,
    lock: (executionId: string) => `${base}:lock:${executionId}`,
    indexLock: `${base}:lock:index`,
    snippetsLock: `${base}:lock:snippets`,
  };
}
export type StoreKeys = ReturnType<typeof storeKeys>;
