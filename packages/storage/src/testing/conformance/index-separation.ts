import { expect, it } from "vitest";
import { ALL, row, runtimeName, T0 } from "./index-fixtures.js";
import type { IndexSuite } from "./index-suite.js";

/** Runtime names and namespaces keep listings apart. */
export function indexSeparationStories(suite: IndexSuite): void {
  const { cannotRun, open } = suite;

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
    const first = (await open(suite.namespace)).index.forRuntime(name);
    const second = (await open(suite.otherNamespace)).index.forRuntime(name);
    const listed = row("in-first", "paused", T0, T0);
    await first.put(listed);
    expect(await second.list({ limit: 10 })).toEqual([]);
    expect(await second.count(["paused"])).toBe(0);
    await second.remove(listed);
    if (suite.shared)
      expect(await (await open(suite.namespace)).index.forRuntime(name).list({ limit: 10 })).toEqual([listed]);
    else expect(await first.list({ limit: 10 })).toEqual([listed]);
  });
}
