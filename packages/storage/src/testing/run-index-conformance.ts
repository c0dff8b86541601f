import { randomUUID } from "node:crypto";
import {
  compareRows,
  type ExecutionIndex,
  type ExecutionIndexProvider,
  type IndexQuery,
  type IndexRow,
} from "@codemode/core/store";
import { afterEach, beforeAll, describe, expect, it } from "vitest";

/** An execution index as the suite sees it: a provider per runtime name, and a way to close it. A `CodemodeStorage` is one. */
export interface IndexUnderTest {
  index: ExecutionIndexProvider;
  close(): Promise<void>;
}

export interface IndexConformanceOptions {
  /**
   * Whether every call of the factory with the same namespace reaches the same data (a server or
   * a file), as two processes would. Turns on the stories that open a second index. Default true;
   * false for an index that lives in one object's memory.
   */
  shared?: boolean;
  /**
   * Why the backend cannot be reached right now, or undefined when it can. With `CI` set in the
   * environment a reason fails the suite; elsewhere each story prints it and returns early.
   */
  unavailable?: () => Promise<string | undefined> | string | undefined;
  /** Makes the backend fail for this index (a killed connection, a closed storage). Default: `close()`. */
  breakIndex?: (opened: IndexUnderTest) => Promise<void>;
  /**
   * The two namespaces the factory is called with: every story uses the first, the story about
   * namespaces both. Default ["conformance-one", "conformance-two"].
   */
  namespaces?: readonly [string, string];
}

const T0 = 1_700_000_000_000;
const ALL = ["running", "paused", "completed", "error", "rejected", "rolled_back"] as const;

/**
 * The execution index conformance suite: registers vitest stories that check an
 * `ExecutionIndexProvider` lists what the runtime relies on — pages in both orders that start
 * exactly after a cursor (rows sharing a createdAt included), status filters, moves, idempotent
 * put and remove, counts, runtime names and namespaces kept apart, 50 concurrent moves, and
 * failures that reject instead of answering an empty page. Every story uses runtime names of its
 * own, so a shared database needs no cleaning in between.
 *
 * @example
 * import { runExecutionIndexConformance } from "@codemode/storage/testing";
 * import { sqliteStorage } from "@codemode/storage/sqlite";
 *
 * runExecutionIndexConformance("sqlite", (namespace) => sqliteStorage("test.sqlite", { namespace }));
 */
export function runExecutionIndexConformance(
  name: string,
  createIndex: (namespace: string) => IndexUnderTest | Promise<IndexUnderTest>,
  options: IndexConformanceOptions = {},
): void {
  const shared = options.shared ?? true;
  const breakIndex = options.breakIndex ?? ((opened: IndexUnderTest) => opened.close());
  const [namespace, otherNamespace] = options.namespaces ?? ["conformance-one", "conformance-two"];

  describe(`${name}: execution index conformance`, () => {
    let unavailableBecause: string | undefined;
    const opened: IndexUnderTest[] = [];

    beforeAll(async () => {
      unavailableBecause = await options.unavailable?.();
      if (unavailableBecause && process.env.CI)
        throw new Error(`${name} is not reachable (${unavailableBecause}); CI must provide it`);
    });
    afterEach(async () => {
      for (const index of opened.splice(0)) await index.close().catch(() => undefined);
    });

    /** True (after printing why) when the backend is not there and this is not CI. */
    const cannotRun = (): boolean => {
      if (!unavailableBecause) return false;
      console.warn(`${name}: story not run: ${unavailableBecause}`);
      return true;
    };
    const open = async (inNamespace = namespace): Promise<IndexUnderTest> => {
      const index = await createIndex(inNamespace);
      opened.push(index);
      return index;
    };
    /** A listing of a runtime name no other story uses. */
    const fresh = async (): Promise<ExecutionIndex> => (await open()).index.forRuntime(runtimeName());

    it("pages newest first and oldest first, each page starting exactly after the last, across rows that share a createdAt", async () => {
      if (cannotRun()) return;
      const index = await fresh();
      const times = [1, 1, 1, 1, 2, 2, 3, 0, 0, 1, 4, 2, 3, 3, 0];
      const ids = ["b", "ab", "a", "abc", "B", "a-1", "a1", "z", "y", "ba", "m", "0", "c", "cc", "x"];
      const rows = ids.map((id, at) => row(id, "completed", T0 + times[at]! * 1_000, T0 + 10_000 + at));
      await Promise.all(rows.map((each) => index.put(each)));
      const oldest = [...rows].sort(compareRows);
      const newest = [...oldest].reverse();
      for (const limit of [1, 2, 4, 100]) {
        expect(await walk(index, { limit }), `newest, pages of ${limit}`).toEqual(newest);
        expect(await walk(index, { limit, order: "newest" }), `newest, pages of ${limit}`).toEqual(newest);
        expect(await walk(index, { limit, order: "oldest" }), `oldest, pages of ${limit}`).toEqual(oldest);
      }
      expect(await index.list({ limit: 3 })).toEqual(newest.slice(0, 3));
      expect(await index.list({ limit: 3, order: "oldest", statuses: ["completed"] })).toEqual(oldest.slice(0, 3));
    });

    it("a cursor whose row is gone, or never was, still starts the page exactly after it", async () => {
      if (cannotRun()) return;
      const index = await fresh();
      const rows = ["a", "b", "c", "d", "e", "f"].map((id, at) => row(id, "paused", T0 + (at < 4 ? 0 : 5), T0 + 20));
      for (const each of rows) await index.put(each);
      const firstPage = await index.list({ limit: 2 });
      expect(firstPage.map((each) => each.id)).toEqual(["f", "e"]);
      await index.remove(firstPage[1]!);
      const next = await index.list({ limit: 10, after: cursorOf(firstPage[1]!) });
      expect(next.map((each) => each.id)).toEqual(["d", "c", "b", "a"]);
      // Between "b" and "c" at the same time, and between the two times.
      expect((await index.list({ limit: 10, after: { createdAt: T0, id: "bb" } })).map((each) => each.id)).toEqual([
        "b",
        "a",
      ]);
      expect(
        (await index.list({ limit: 10, order: "oldest", after: { createdAt: T0, id: "bb" } })).map((each) => each.id),
      ).toEqual(["c", "d", "f"]);
      expect(
        (await index.list({ limit: 10, order: "oldest", after: { createdAt: T0 + 1, id: "zzz" } })).map(
          (each) => each.id,
        ),
      ).toEqual(["f"]);
      expect(await index.list({ limit: 10, after: { createdAt: T0 - 1, id: "zzz" } })).toEqual([]);
    });

    it("filters by status, and merges several statuses into one order", async () => {
      if (cannotRun()) return;
      const index = await fresh();
      const rows = Array.from({ length: 24 }, (_, at) =>
        row(`run-${String(at).padStart(2, "0")}`, ALL[at % ALL.length]!, T0 + Math.floor(at / 3), T0 + 100 + at),
      );
      await Promise.all(rows.map((each) => index.put(each)));
      const sorted = [...rows].sort(compareRows);
      const only = (...statuses: IndexRow["status"][]) => sorted.filter((each) => statuses.includes(each.status));
      expect(await index.list({ limit: 100, statuses: ["paused"], order: "oldest" })).toEqual(only("paused"));
      expect(await walk(index, { limit: 3, statuses: ["completed", "error", "rejected"] })).toEqual(
        only("completed", "error", "rejected").reverse(),
      );
      expect(await walk(index, { limit: 5, statuses: ["running", "rolled_back"], order: "oldest" })).toEqual(
        only("running", "rolled_back"),
      );
      expect(await walk(index, { limit: 7 })).toEqual([...sorted].reverse());
      expect(await index.list({ limit: 100, statuses: [...ALL] })).toEqual([...sorted].reverse());
      expect(await index.count(["paused"])).toBe(4);
      expect(await index.count(["completed", "error", "rejected", "rolled_back"])).toBe(16);
      expect(await index.count([...ALL])).toBe(24);
    });

    it("a move lists the execution under its new status only, with the new updatedAt; counts follow", async () => {
      if (cannotRun()) return;
      const index = await fresh();
      const other = row("other", "running", T0, T0);
      await index.put(other);
      const started = row("run", "running", T0 + 1, T0 + 1);
      await index.put(started);
      expect(await index.count(["running"])).toBe(2);

      await index.put({ ...started, status: "paused", updatedAt: T0 + 50 }, "running");
      expect(await index.list({ limit: 10, statuses: ["running"] })).toEqual([other]);
      expect(await index.list({ limit: 10, statuses: ["paused"] })).toEqual([
        { ...started, status: "paused", updatedAt: T0 + 50 },
      ]);
      expect(await index.count(["running"])).toBe(1);
      expect(await index.count(["paused"])).toBe(1);

      await index.put({ ...started, status: "completed", updatedAt: T0 + 90 }, "paused");
      expect(await index.list({ limit: 10 })).toEqual([{ ...started, status: "completed", updatedAt: T0 + 90 }, other]);
      expect(await index.count(["running", "paused", "completed"])).toBe(2);
      expect(await index.count(["paused"])).toBe(0);
    });

    it("put and remove are idempotent, and harmless for rows that are not there", async () => {
      if (cannotRun()) return;
      const index = await fresh();
      const paused = row("twice", "paused", T0, T0 + 1);
      await index.put(paused);
      await index.put(paused);
      await index.put(paused, "paused");
      expect(await index.list({ limit: 10 })).toEqual([paused]);
      // A previous status it was never listed under.
      const fresh2 = row("new", "running", T0 + 1, T0 + 1);
      await index.put(fresh2, "error");
      expect(await index.list({ limit: 10 })).toEqual([fresh2, paused]);
      expect(await index.count(["error"])).toBe(0);

      await index.remove(paused);
      await index.remove(paused);
      await index.remove(row("never", "completed", T0, T0));
      expect(await index.list({ limit: 10 })).toEqual([fresh2]);
      await index.remove(fresh2);
      expect(await index.list({ limit: 10 })).toEqual([]);
      expect(await index.count([...ALL])).toBe(0);
      await index.put(paused);
      expect(await index.list({ limit: 10 })).toEqual([paused]);
    });

    it("runtime names keep listings apart", async () => {
      if (cannotRun()) return;
      const provider = (await open()).index;
      const shop = provider.forRuntime(runtimeName());
      const warehouse = provider.forRuntime(runtimeName());
      const order = row("same-id", "paused", T0, T0);
      await shop.put(order);
      await warehouse.put({ ...order, status: "completed" });
      expect(await shop.list({ limit: 10 })).toEqual([order]);
      expect(await warehouse.list({ limit: 10 })).toEqual([{ ...order, status: "completed" }]);
      await warehouse.remove({ ...order, status: "completed" });
      expect(await shop.count(["paused"])).toBe(1);
      expect(await warehouse.count([...ALL])).toBe(0);
    });

    it("namespaces keep listings apart", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const first = (await open(namespace)).index.forRuntime(name);
      const second = (await open(otherNamespace)).index.forRuntime(name);
      const listed = row("in-first", "paused", T0, T0);
      await first.put(listed);
      expect(await second.list({ limit: 10 })).toEqual([]);
      expect(await second.count(["paused"])).toBe(0);
      await second.remove(listed);
      if (shared) expect(await (await open(namespace)).index.forRuntime(name).list({ limit: 10 })).toEqual([listed]);
      else expect(await first.list({ limit: 10 })).toEqual([listed]);
    });

    if (shared) {
      it("a second index opened on the same backend (another process, a restart) sees the same listing and moves it", async () => {
        if (cannotRun()) return;
        const name = runtimeName();
        const first = (await open()).index.forRuntime(name);
        const second = (await open()).index.forRuntime(name);
        const paused = row("shared", "paused", T0, T0);
        await first.put(paused);
        expect(await second.list({ limit: 10, statuses: ["paused"] })).toEqual([paused]);
        await second.put({ ...paused, status: "completed", updatedAt: T0 + 5 }, "paused");
        expect(await first.list({ limit: 10 })).toEqual([{ ...paused, status: "completed", updatedAt: T0 + 5 }]);
      });
    }

    it("50 concurrent moves: every execution ends listed once, under its last status", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const first = (await open()).index.forRuntime(name);
      const second = shared ? (await open()).index.forRuntime(name) : first;
      const rows = Array.from({ length: 50 }, (_, at) => row(`c-${at}`, "running", T0 + (at % 7), T0));
      await Promise.all(rows.map((each, at) => (at % 2 ? second : first).put(each)));
      await Promise.all(
        rows.map((each, at) =>
          (at % 2 ? first : second).put({ ...each, status: "paused", updatedAt: T0 + 1 }, "running"),
        ),
      );
      const ended = rows.map((each, at) => ({
        ...each,
        status: at % 5 === 0 ? ("error" as const) : ("completed" as const),
        updatedAt: T0 + 2,
      }));
      await Promise.all(ended.map((each, at) => (at % 3 ? first : second).put(each, "paused")));
      expect(await first.count(["running", "paused"])).toBe(0);
      expect(await second.count(["completed"])).toBe(40);
      expect(await second.count(["error"])).toBe(10);
      expect(await walk(first, { limit: 7, order: "oldest" })).toEqual([...ended].sort(compareRows));
    });

    it("a backend that fails rejects put, remove, list and count — never an empty page or a zero", async () => {
      if (cannotRun()) return;
      const opened = await open();
      const index = opened.index.forRuntime(runtimeName());
      const listed = row("before", "paused", T0, T0);
      await index.put(listed);
      expect(await index.list({ limit: 10 })).toEqual([listed]);
      await breakIndex(opened);
      await expect(index.list({ limit: 10 })).rejects.toThrow();
      await expect(
        index.list({ limit: 10, statuses: ["paused"], order: "oldest", after: { createdAt: T0 + 1, id: "x" } }),
      ).rejects.toThrow();
      await expect(index.count(["paused"])).rejects.toThrow();
      await expect(index.put({ ...listed, status: "completed" }, "paused")).rejects.toThrow();
      await expect(index.remove(listed)).rejects.toThrow();
    });
  });
}

function row(id: string, status: IndexRow["status"], createdAt: number, updatedAt: number): IndexRow {
  return { id, status, createdAt, updatedAt };
}

function cursorOf(last: IndexRow): { createdAt: number; id: string } {
  return { createdAt: last.createdAt, id: last.id };
}

/** Every row of a query, read page by page with the last row of each page as the next cursor. */
async function walk(index: ExecutionIndex, query: IndexQuery): Promise<IndexRow[]> {
  const rows: IndexRow[] = [];
  for (let pages = 0; pages < 1_000; pages++) {
    const page = await index.list({ ...query, after: rows.length > 0 ? cursorOf(rows.at(-1)!) : undefined });
    expect(page.length).toBeLessThanOrEqual(query.limit);
    rows.push(...page);
    if (page.length < query.limit) return rows;
  }
  throw new Error("the listing did not end after 1,000 pages");
}

function runtimeName(): string {
  return `ix-${randomUUID().slice(0, 8)}`;
}
