/**
 * The fleet under fire (`@codemode/bullmq`): three worker processes, one approving process, 100
 * runs of five calls each (the third needs approval), and every ~2 s a worker either SIGKILLed
 * and started again or frozen (SIGSTOP) for three times its lease and then woken (SIGCONT): a
 * stalled worker must change nothing of a run another worker took over. On Redis (BullMQ over node-redis, runs in `redisStorage`), then on PostgreSQL
 * alone (BullMQ's PostgreSQL backend, runs in `postgresStorage`, no Redis at all). Real child
 * processes importing the BUILT packages: run `npm run build` first (CI does).
 */
import { tcpUnreachable } from "@codemode/storage/testing";
import { beforeAll, describe, it } from "vitest";
import { backends } from "./fleet-processes/backends.ts";
import { EXECUTIONS, fleetUnderFire } from "./fleet-processes/story.ts";

for (const backend of backends) {
  describe(`a fleet on ${backend.name === "redis" ? "Redis" : "PostgreSQL alone"}`, () => {
    let unavailable: string | undefined;
    beforeAll(async () => {
      unavailable = await tcpUnreachable(backend.url);
      if (unavailable && process.env.CI)
        throw new Error(`${backend.name} is not reachable (${unavailable}); CI must provide it`);
    });

    it(`R-ST-4 R-ST-6 ${EXECUTIONS} runs of five calls complete while every ~2 s a worker is SIGKILLed or frozen past its lease: each effect once per idempotency key, every entry applied, no approved call before its approval`, async () => {
      if (unavailable) return void console.warn(`story not run: ${backend.name} is not reachable (${unavailable})`);
      await fleetUnderFire(backend);
    }, 240_000);
  });
}
