import type Keyv from "keyv";

/** Keys and text values as the runtime hands them to the storage's Keyv. */
export type KeyvEntries = ReadonlyArray<{ key: string; value: string }>;

/**
 * What a Keyv instance would store for `entries`: each key as its adapter names it in the
 * database, each value serialized by Keyv (`{"value":…}` by default). A lock's fenced write
 * stores these itself, in the operation that checks the lease, and Keyv reads them back as if it
 * had written them.
 */
export type StoredRows = (entries: KeyvEntries) => Promise<Array<{ key: string; value: string }>>;

/** `StoredRows` for `keyv`, whose adapter stores key `k` under `storedKey(k)`. */
export function storedRows(keyv: Keyv, storedKey: (key: string) => string): StoredRows {
  return async (entries) =>
    Promise.all(
      entries.map(async (entry) => {
        const value = await keyv.serializeData({ value: entry.value, expires: undefined });
        if (typeof value !== "string")
          throw new TypeError("a fenced write needs a Keyv that serializes its values to text");
        return { key: storedKey(entry.key), value };
      }),
    );
}
