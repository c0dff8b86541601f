/**
 * Issue 17.10: replay-stable randomness that nobody can recompute. `crypto.randomUUID()` and
 * `getRandomValues()` were seeded from the execution id, which every outcome shows, so a token a
 * program drew could be recomputed by anyone who saw the outcome. A new execution draws from a
 * secret seed kept in its record (never in an outcome); an execution started before keeps its
 * old seed and generator, so it still replays.
 */
import { createContext, runInContext } from "node:vm";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";
import { installRandom } from "../packages/core/src/sandbox/prelude/install-random.ts";

const tokens: unknown[] = [];
const vault = defineConnector({
  name: "vault",
  tools: {
    store: {
      requiresApproval: true,
      execute: async (args: { token: string }) => {
        tokens.push(args.token);
        return "stored";
      },
    },
  },
});

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  tokens.length = 0;
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function setup() {
  const map = new Map<string, string>();
  const runtime = createCodemodeRuntime({ connectors: [vault], storage: new Keyv({ store: map }) });
  runtimes.push(runtime);
  const headKey = (id: string) => `keyv:cm:default:h:${id}`;
  const readHead = (id: string) =>
    JSON.parse((JSON.parse(map.get(headKey(id))!) as { value: string }).value) as Record<string, unknown>;
  const writeHead = (id: string, head: Record<string, unknown>) =>
    map.set(headKey(id), JSON.stringify({ value: JSON.stringify(head), expires: null }));
  return { runtime, map, readHead, writeHead };
}

/** What the generator of executions started before issue 17.10 draws for `seed`. */
function oldRandomUUID(seed: string): string {
  const context = createContext();
  const global = runInContext("globalThis", context) as Record<string, unknown>;
  const install = runInContext(`(${installRandom.toString()})`, context) as typeof installRandom;
  install(global, { seed }, undefined as never, () => "");
  return runInContext("crypto.randomUUID()", context) as string;
}

const DRAW = "async () => { const token = crypto.randomUUID(); await vault.store({ token }); return token; }";

describe("randomness from a secret seed (issue 17.10)", () => {
  it("R-SB-6: a token drawn with crypto.randomUUID cannot be recomputed from the execution id", async () => {
    const { runtime } = setup();
    const paused = await runtime.execute({ code: DRAW });
    expect(paused.status).toBe("paused");
    const token = (paused.status === "paused" ? paused.pending[0]?.args : undefined) as { token: string };
    expect(token.token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(token.token).not.toBe(oldRandomUUID(paused.executionId));
  });

  it("R-SB-6: it is the same on every pass: the approved call gets the token the approver saw", async () => {
    const { runtime } = setup();
    const paused = await runtime.execute({ code: DRAW });
    const shown = paused.status === "paused" ? (paused.pending[0]!.args as { token: string }).token : "";
    const approved = await runtime.approve({ executionId: paused.executionId });
    expect(approved).toMatchObject({ status: "completed", result: shown });
    expect(tokens).toEqual([shown]);
  });

  it("R-SB-6: two executions of the same code draw different tokens", async () => {
    const { runtime } = setup();
    const [first, second] = [await runtime.execute({ code: DRAW }), await runtime.execute({ code: DRAW })];
    const token = (outcome: typeof first) =>
      outcome.status === "paused" ? (outcome.pending[0]!.args as { token: string }).token : "";
    expect(token(first)).not.toBe(token(second));
  });

  it("R-SB-6: the secret seed is in the record and in no outcome, record view or listing", async () => {
    const { runtime, readHead } = setup();
    const paused = await runtime.execute({ code: DRAW });
    const secret = readHead(paused.executionId).secretSeed as string;
    expect(secret).toMatch(/^[\w-]{43}$/);
    const shown = JSON.stringify([
      paused,
      await runtime.execution(paused.executionId),
      await runtime.executions(),
      await runtime.pending(),
      await runtime.outcome(paused.executionId),
    ]);
    expect(shown).not.toContain(secret);
  });

  it("R-SB-6: an execution started before secret seeds keeps its seed and generator, and replays", async () => {
    const { runtime, map, readHead, writeHead } = setup();
    const paused = await runtime.execute({ code: DRAW });
    const id = paused.executionId;
    // Make it what an older runtime left: no secret seed, and the token its generator drew.
    const { secretSeed: _secret, ...oldHead } = readHead(id);
    writeHead(id, oldHead);
    const entryKey = `keyv:cm:default:e:${id}:0`;
    const entry = JSON.parse((JSON.parse(map.get(entryKey)!) as { value: string }).value) as { args: string };
    const oldToken = oldRandomUUID(id);
    map.set(
      entryKey,
      JSON.stringify({ value: JSON.stringify({ ...entry, args: JSON.stringify({ token: oldToken }) }), expires: null }),
    );
    const approved = await runtime.approve({ executionId: id });
    expect(approved).toMatchObject({ status: "completed", result: oldToken });
    expect(tokens).toEqual([oldToken]);
  });
});
