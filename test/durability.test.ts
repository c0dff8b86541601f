/**
 * Durability edges: what a later load sees of a pass that died mid-write (R-ST-1, R-RP-4), and
 * replays that must fit where the first pass fitted (R-AP-2).
 */

import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { KeyvLike } from "@codemode/core/store";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("durability", () => {
  it("R-ST-1 R-RB-1: no call beyond the stored head's seq limit runs before the head that covers it has landed", async () => {
    const real = new Keyv();
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    let headWriteStarted = false;
    // The write of the head that raises the limit to 64 hangs, as on a host about to die.
    const store: KeyvLike = {
      get: (key) => real.get(key),
      set: (key, value) => real.set(key, value),
      delete: (key) => real.delete(key as string),
      getMany: (keys) => real.getMany(keys),
      setMany: async (entries) => {
        const head = entries.find((entry) => entry.key.includes(":h:"));
        if (head && (JSON.parse(head.value as string) as { seqLimit: number }).seqLimit >= 64) {
          headWriteStarted = true;
          await blocked;
        }
        return real.setMany(entries as never);
      },
    };
    const effects: number[] = [];
    const tools = defineConnector({
      name: "t",
      tools: { w: { execute: (args: { i: number }) => void effects.push(args.i) } },
    });
    const runtime = createCodemodeRuntime({ connectors: [tools], storage: store });
    const running = runtime.execute({
      code: "async () => { for (let i = 0; i < 32; i++) await t.w({ i }); await Promise.all([t.w({ i: 32 }), t.w({ i: 33 })]); return 'done'; }",
    });
    while (!headWriteStarted) await sleep(5);
    await sleep(50);
    // Seq 32 raised the limit; seq 33 lies in the same new block. Neither may run yet: a host
    // dying now would leave effects no later load could see, and rollback could not undo.
    expect(effects).toEqual(Array.from({ length: 32 }, (_, index) => index));
    unblock();
    expect(await running).toMatchObject({ status: "completed", result: "done" });
    expect(effects.slice(32).sort()).toEqual([32, 33]);
    const record = await runtime.execution((await running).executionId);
    expect(record?.log.map((entry) => entry.seq)).toEqual(Array.from({ length: 34 }, (_, index) => index));
    await runtime.close();
  });

  it("R-AP-2: a run whose first pass fitted the heap one result at a time can be approved, however many results it replays", async () => {
    const files = defineConnector({
      name: "files",
      tools: {
        read: { execute: (args: { n: number }) => `${args.n}:`.padEnd(900_000, "x") },
        publish: { requiresApproval: true, execute: (args: { total: number }) => `published ${args.total}` },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [files] });
    const code = `async () => {
      let total = 0;
      for (let n = 0; n < 100; n++) total += (await files.read({ n })).length;
      return files.publish({ total });
    }`;
    const first = await runtime.execute({ code });
    expect(first.status).toBe("paused");
    const approved = await runtime.approve({ executionId: first.executionId });
    expect(approved).toMatchObject({ status: "completed", result: "published 90000000" });
    await runtime.close();
    // 90 MB crosses to the sandbox twice and is recorded once: seconds on a small machine, and
    // several times that with QuickJS on Node 22 beside the rest of the suite.
  }, 120_000);
});
