/**
 * The approval inbox handler with a fleet queue: approvals go to the queue and its lifecycle events
 * reach open pages at once; an edit, which the queue cannot carry, is decided in the handler's
 * runtime (R-AP-9). Over plain HTTP, no browser.
 */
import { EventEmitter } from "node:events";
import type { CodemodeQueue } from "@codemode/bullmq";
import type { InboxQueue } from "@codemode/cli/inbox";
import { describe, expect, expectTypeOf, it } from "vitest";
import { GATED_PROGRAM } from "./cli-fixtures/tickets.ts";
import { decisionPoster, formToken, shopConnector, TWO_ORDERS, useInbox } from "./inbox-fixtures.ts";

const { serve, inbox } = useInbox();

describe("the approval inbox handler", () => {
  it("with a fleet queue: approvals go to the queue, and its lifecycle events reach open pages at once", async () => {
    const events = new EventEmitter();
    const approvals: unknown[] = [];
    const queue: InboxQueue = {
      approve: async (input) => {
        approvals.push(input);
        return { executionId: input.executionId, seq: input.seq ?? 0 };
      },
      reject: async () => false,
      events,
    };
    // The bullmq queue has this shape.
    expectTypeOf<CodemodeQueue>().toExtend<InboxQueue>();
    const { runtime, base, origin, cookie } = await serve({ queue, pollMs: 600_000 });
    const paused = await runtime.execute({ code: GATED_PROGRAM });
    const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();

    const controller = new AbortController();
    const stream = await fetch(`${base}/events`, { headers: { cookie }, signal: controller.signal });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reader = stream.body!.getReader();
    const received: string[] = [];
    const waitFor = async (text: string) => {
      while (!received.join("").includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error("the event stream ended");
        received.push(new TextDecoder().decode(value));
      }
    };
    await waitFor("retry:");
    events.emit("completed", { executionId: paused.executionId });
    await waitFor("event: changed");

    const queued = await fetch(`${base}/executions/${paused.executionId}/decide`, {
      method: "POST",
      headers: { cookie, origin, accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: formToken(page), seq: "1", decision: "approve", by: "dana" }),
    });
    expect(await queued.json()).toMatchObject({
      ok: true,
      message: `Approved seq 1 of ${paused.executionId.slice(0, 8)}; a worker resumes the run.`,
    });
    expect(approvals).toEqual([{ executionId: paused.executionId, seq: 1, by: "dana" }]);
    // The queue decides; the runtime here ran nothing.
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    controller.abort();
    await inbox()!.close();
    expect(events.listenerCount("completed")).toBe(0);
  });

  it("R-AP-9: with a fleet queue, a plain approval goes to the queue; an edit (which the queue cannot carry) is decided by the runtime here", async () => {
    const approvals: unknown[] = [];
    const queue: InboxQueue = {
      approve: async (input) => {
        approvals.push(input);
        return { executionId: input.executionId, seq: input.seq ?? 0 };
      },
      reject: async () => false,
      events: new EventEmitter(),
    };
    const ran: unknown[] = [];
    const served = await serve({ queue, pollMs: 600_000, connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { post } = await decisionPoster(served, paused.executionId);
    expect((await post({ seq: "0", decision: "approve" })).answer).toMatchObject({ ok: true, status: "running" });
    expect(approvals).toEqual([{ executionId: paused.executionId, seq: 0, by: "dana" }]);
    const edited = await post({ seq: "1", decision: "edit", args: '{"sku":"teapot","qty":1}' });
    expect(edited.answer).toMatchObject({ ok: true, status: "paused", pending: [{ seq: 0 }] });
    expect(ran).toEqual([{ sku: "teapot", qty: 1 }]);
  });
});
