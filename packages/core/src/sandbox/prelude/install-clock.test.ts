import { describe, expect, it } from "vitest";
import { installClock } from "./install-clock.js";
import { partRealm } from "./part-realm-fixtures.js";

const START = Date.UTC(2024, 0, 2, 3, 4, 5);

/** A fresh realm with the clock installed from its source text, as prelude.ts injects it. */
function realmWithClock(clockMs: number): (expression: string) => unknown {
  const realm = partRealm();
  realm.load(installClock)(realm.intrinsics, realm.global, clockMs);
  return realm.read;
}

describe("installClock (R-SB-6)", () => {
  it("the clock stands still at the execution's start, however long the pass runs", async () => {
    const read = realmWithClock(START);
    expect(read("Date.now()")).toBe(START);
    expect(read("new Date().getTime()")).toBe(START);
    expect(read("Date()")).toBe(new Date(START).toString());
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(read("[Date.now(), new Date().toISOString()]")).toEqual([START, "2024-01-02T03:04:05.000Z"]);
  });

  it("two passes of one execution read the same time", () => {
    const firstPass = realmWithClock(START);
    const secondPass = realmWithClock(START);
    const reads = "[Date(), new Date().toISOString(), Date.now(), new Date().getTimezoneOffset()]";
    expect(secondPass(reads)).toEqual(firstPass(reads));
  });

  it("dates built from arguments, parse, UTC, instanceof and subclasses behave as usual", () => {
    const read = realmWithClock(START);
    expect(read("new Date(0).toISOString()")).toBe("1970-01-01T00:00:00.000Z");
    expect(read("new Date('2020-05-06T07:08:09Z').getTime()")).toBe(Date.UTC(2020, 4, 6, 7, 8, 9));
    expect(read("Date.parse('2020-01-01T00:00:00Z')")).toBe(Date.UTC(2020, 0, 1));
    expect(read("Date.UTC(2020, 0, 1)")).toBe(Date.UTC(2020, 0, 1));
    expect(read("[new Date() instanceof Date, Date.prototype.constructor === Date, Date.name]")).toEqual([
      true,
      true,
      "Date",
    ]);
    expect(
      read(
        "class Later extends Date {}; [new Later().getTime(), new Later(5).getTime(), new Later() instanceof Later]",
      ),
    ).toEqual([START, 5, true]);
  });

  it("Date.now can be replaced by the program, but Date.prototype cannot be swapped", () => {
    const read = realmWithClock(START);
    expect(read("'use strict'; try { Date.prototype = {}; 'replaced' } catch { 'kept' }")).toBe("kept");
    expect(read("Date.now = () => 1; Date.now()")).toBe(1);
  });
});
