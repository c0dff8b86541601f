import { randomUUID } from "node:crypto";
import { tcpUnreachable } from "@codemode/storage/testing";
import { Queue, QueueEvents, Worker } from "bullmq";
import { beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackendWithReliableEvents } from "./postgres-events.js";

const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

describe("BullMQ's PostgreSQL backend with the reliable event reader", () => {
  let unavailable: string | undefined;
  beforeAll(async () => {
    unavailable = await tcpUnreachable(POSTGRES_URL);
    if (unavailable && process.env.CI)
      throw new Error(`PostgreSQL is not reachable (${unavailable}); CI must provide it`);
  });

  it("a client held out of the pool whose connection fails between two queries does not end the process (the readiness check holds one across its migrations)", async () => {
    if (unavailable) return void console.warn(`story not run: PostgreSQL is not reachable (${unavailable})`);
    const name = `cm-held-${randomUUID().slice(0, 8)}`;
    const options = { connection: { connectionString: POSTGRES_URL, migrate: true } as never };
    const queue = new Queue(name, options, createPostgresBackendWithReliableEvents as never);
    const uncaught: unknown[] = [];
    const hear = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", hear);
    try {
      await queue.waitUntilReady();
      const pool = (queue as unknown as { backend: { connection: { pool: import("pg").Pool } } }).backend.connection
        .pool;
      const client = await pool.connect();
      await client.query("SELECT 1");
      // As a restart of the database does between two of the check's queries.
      const stream = (client as unknown as { connection: { stream: import("node:net").Socket } }).connection.stream;
      stream.destroy(new Error("read ECONNRESET"));
      await new Promise((resolve) => setTimeout(resolve, 200));
      client.release(true);
      expect(uncaught).toEqual([]);
      // The pool goes on with fresh clients.
      expect((await pool.query("SELECT 2 AS two")).rows).toEqual([{ two: 2 }]);
    } finally {
      process.off("uncaughtException", hear);
      await queue.close();
    }
  });

  it("delivers every completed event when jobs finish concurrently and commit out of id order", async () => {
    if (unavailable) return void console.warn(`story not run: PostgreSQL is not reachable (${unavailable})`);
    const name = `cm-events-${randomUUID().slice(0, 8)}`;
    const options = { connection: { connectionString: POSTGRES_URL, migrate: true, max: 6 } as never };
    const backend = createPostgresBackendWithReliableEvents as never;
    const queue = new Queue(name, options, backend);
    const events = new QueueEvents(name, { ...options, blockingTimeout: 1_000 }, backend);
    const workers = [1, 2].map(
      () =>
        new Worker(
          name,
          async () => new Promise((resolve) => setTimeout(() => resolve(1), Math.random() * 5)),
          { ...options, concurrency: 8 },
          backend,
        ),
    );
    try {
      const seen = new Map<string, number>();
      events.on("completed", ({ jobId }: { jobId: string }) => seen.set(jobId, (seen.get(jobId) ?? 0) + 1));
      await events.waitUntilReady();
      // The reader resolves "from now on" at its first read: give it that read before adding jobs.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const total = 400;
      await queue.addBulk(
        Array.from({ length: total }, (_, index) => ({
          name: "job",
          data: {},
          opts: { jobId: `job-${index}`, removeOnComplete: true },
        })),
      );
      await expect.poll(() => seen.size, { timeout: 30_000, interval: 200 }).toBe(total);
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
    } finally {
      for (const worker of workers) await worker.close();
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  }, 60_000);
});
