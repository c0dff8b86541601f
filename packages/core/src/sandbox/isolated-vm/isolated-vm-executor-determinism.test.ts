/** The isolated-vm executor: the replay-stable clock and randomness of deterministic passes. */
import { describe, expect, it } from "vitest";
import { expectReturned, isolatedVmExecutorForTests } from "../pass-fixtures.js";

const { run } = isolatedVmExecutorForTests();

describe("R-SB-6 replay-stable clock and randomness", () => {
  const probe = `async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(8));
    const words = crypto.getRandomValues(new Uint32Array(2));
    return {
      now: Date.now(), iso: new Date().toISOString(), text: Date(),
      randoms: [Math.random(), Math.random(), Math.random()],
      uuid: crypto.randomUUID(), bytes: Array.from(bytes), words: Array.from(words),
    };
  }`;
  type Probe = {
    now: number;
    iso: string;
    text: string;
    randoms: number[];
    uuid: string;
    bytes: number[];
    words: number[];
  };
  const clockMs = Date.UTC(2024, 4, 6, 7, 8, 9);

  it("R-SB-6: the same seed and clock give the same values on every pass", async () => {
    const one = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    const two = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    expect(two).toEqual(one);
    expect(one.now).toBe(clockMs);
    expect(one.iso).toBe(new Date(clockMs).toISOString());
    expect(new Set(one.randoms).size).toBe(3);
    for (const random of one.randoms) expect(random >= 0 && random < 1).toBe(true);
    expect(one.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("R-SB-6: a different seed gives different randomness and the same clock", async () => {
    const one = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    const two = expectReturned(await run(probe, { deterministic: { seed: "exec-b", clockMs } })) as Probe;
    expect(two.now).toBe(one.now);
    expect(two.randoms).not.toEqual(one.randoms);
    expect(two.uuid).not.toBe(one.uuid);
    expect(two.bytes).not.toEqual(one.bytes);
  });

  it("R-SB-6: a different clock moves the clock and not the randomness", async () => {
    const one = expectReturned(await run(probe, { deterministic: { seed: "exec-a", clockMs } })) as Probe;
    const two = expectReturned(
      await run(probe, { deterministic: { seed: "exec-a", clockMs: clockMs + 1_000 } }),
    ) as Probe;
    expect(two.now).toBe(clockMs + 1_000);
    expect(two.randoms).toEqual(one.randoms);
  });

  it("R-SB-6: deterministic: false gives the real clock and fresh randomness", async () => {
    const one = expectReturned(await run(probe, { deterministic: false })) as Probe;
    const two = expectReturned(await run(probe, { deterministic: false })) as Probe;
    expect(one.now).not.toBe(clockMs);
    expect(Math.abs(one.now - Date.now())).toBeLessThan(60_000);
    expect(two.randoms).not.toEqual(one.randoms);
    expect(two.uuid).not.toBe(one.uuid);
    expect(one.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("R-SB-6: Date keeps working as Date with the clock held still", async () => {
    const value = expectReturned(
      await run(
        "async () => [new Date(0).toISOString(), new Date(2020, 0, 1).getFullYear(), Date.UTC(2000, 0, 1), Date.parse('2001-01-01T00:00:00Z'), new Date() instanceof Date, new Date().constructor === Date, typeof Date(), Date.now() === new Date().getTime()]",
        {
          deterministic: { seed: "s", clockMs },
        },
      ),
    );
    expect(value).toEqual([
      "1970-01-01T00:00:00.000Z",
      2020,
      Date.UTC(2000, 0, 1),
      Date.parse("2001-01-01T00:00:00Z"),
      true,
      true,
      "string",
      true,
    ]);
  });

  it("R-SB-6: getRandomValues refuses float arrays and oversized requests", async () => {
    const value = expectReturned(
      await run(
        "async () => { const out = []; for (const make of [() => new Float64Array(2), () => new Uint8Array(70000), () => ({})]) { try { crypto.getRandomValues(make()); out.push('accepted'); } catch (error) { out.push(error.name); } } return out; }",
      ),
    );
    expect(value).toEqual(["TypeError", "RangeError", "TypeError"]);
  });
});
