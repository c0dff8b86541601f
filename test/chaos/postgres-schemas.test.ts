/**
 * R-ST-7: a fleet on PostgreSQL set up as teams set it up — its runs in a schema of its own, its
 * connections' `search_path` pointing at another schema, or as a role that owns a schema of its
 * own name (which PostgreSQL's default `"$user", public` finds first) — completes 100 of 100 runs
 * while its workers are SIGKILLed and frozen past their lease. Set up so before the storage named
 * its schema in every statement, such a fleet read its runs from one schema and wrote them to
 * another, and lost every run. The story is the fleet test's (test/fleet-processes/story.ts);
 * BullMQ and the ledger stay in their own places.
 */
import { randomUUID } from "node:crypto";
import { tcpUnreachable } from "@codemode/storage/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type BackendCase, backends, POSTGRES_URL } from "../fleet-processes/backends.ts";
import { EXECUTIONS, fleetUnderFire } from "../fleet-processes/story.ts";

const postgres = backends.find((backend) => backend.name === "postgres") as BackendCase;
const suffix = randomUUID().slice(0, 8);
const OWN = `cm_fleet_own_${suffix}`;
const ELSEWHERE = `cm_fleet_elsewhere_${suffix}`;
const ROLE = `cm_fleet_role_${suffix}`;

function asRole(): string {
  const url = new URL(POSTGRES_URL);
  url.username = ROLE;
  url.password = "";
  return url.toString();
}

async function admin(statements: string[]): Promise<void> {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  try {
    for (const statement of statements) await pool.query(statement);
  } finally {
    await pool.end();
  }
}

const setups: Array<{ title: string; runs: NonNullable<BackendCase["runs"]> }> = [
  { title: "its runs in a schema of their own", runs: { schema: OWN } },
  { title: "a search_path that points at another schema", runs: { schema: OWN, searchPath: ELSEWHERE } },
  { title: "a role that owns a schema of its own name (runs in public)", runs: { url: asRole() } },
];

let unavailable: string | undefined;
beforeAll(async () => {
  unavailable = await tcpUnreachable(POSTGRES_URL);
  if (unavailable && process.env.CI)
    throw new Error(`PostgreSQL is not reachable (${unavailable}); CI must provide it`);
  if (unavailable) return;
  await admin([
    `CREATE SCHEMA "${ELSEWHERE}"`,
    `CREATE ROLE "${ROLE}" LOGIN`,
    `CREATE SCHEMA "${ROLE}" AUTHORIZATION "${ROLE}"`,
    `GRANT USAGE, CREATE ON SCHEMA public TO "${ROLE}"`,
  ]);
});

afterAll(async () => {
  if (unavailable) return;
  await admin([
    `DROP SCHEMA IF EXISTS "${OWN}" CASCADE`,
    `DROP SCHEMA IF EXISTS "${ELSEWHERE}" CASCADE`,
    `DROP SCHEMA IF EXISTS "${ROLE}" CASCADE`,
    `DROP OWNED BY "${ROLE}"`,
    `DROP ROLE IF EXISTS "${ROLE}"`,
  ]);
});

for (const setup of setups) {
  describe(`a fleet on PostgreSQL with ${setup.title}`, () => {
    it(`R-ST-7 R-ST-4 ${EXECUTIONS} of ${EXECUTIONS} runs complete while workers are SIGKILLed and frozen past their lease`, async () => {
      if (unavailable) return void console.warn(`story not run: PostgreSQL is not reachable (${unavailable})`);
      await fleetUnderFire({ ...postgres, runs: setup.runs });
    }, 240_000);
  });
}
