import { createContext, runInContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installClock } from "./install-clock.js";
import { installIntlGuard } from "./install-intl-guard.js";
import { createUtcDates, createUtcTimeZone } from "./install-time-zone.js";
import { partRealm } from "./part-realm-fixtures.js";

const START = Date.UTC(2024, 0, 2, 3, 4, 5);
const previousZone = process.env.TZ;

/** A fresh realm with the clock and the UTC time zone installed from their source text, as sandbox-setup.ts does. */
function deterministicRealm(): (expression: string) => unknown {
  const { global, load, intrinsics, read } = partRealm();
  const timeZone = load(createUtcTimeZone)(intrinsics, START, load(createUtcDates));
  load(installClock)(intrinsics, global, START);
  intrinsics.onFirstRead(global, "Date", timeZone.patchDates);
  load(installIntlGuard)(intrinsics, global, 1_000, timeZone.patchIntl);
  return read;
}

describe("createUtcTimeZone (R-SB-6, issue 17.10)", () => {
  // The host is somewhere far from UTC: nothing the sandbox shows may depend on it.
  beforeAll(() => {
    process.env.TZ = "Asia/Kolkata";
  });
  afterAll(() => {
    if (previousZone === undefined) delete process.env.TZ;
    else process.env.TZ = previousZone;
  });

  it("the host really is at +05:30 in these tests, outside the sandbox", () => {
    expect(new Date(START).getTimezoneOffset()).toBe(-330);
    expect(runInContext("new Date(0).getHours()", createContext())).toBe(5);
  });

  it("local-time getters, setters, the offset and the texts of dates are UTC", () => {
    const read = deterministicRealm();
    expect(
      read(
        "const d = new Date(); [d.getFullYear(), d.getMonth(), d.getDate(), d.getDay(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getTimezoneOffset(), d.getYear()]",
      ),
    ).toEqual([2024, 0, 2, 2, 3, 4, 5, 0, 124]);
    expect(
      read(
        "[String(new Date()), new Date().toDateString(), new Date().toTimeString(), Date(), `${new Date(-62198755200000)}`]",
      ),
    ).toEqual([
      "Tue Jan 02 2024 03:04:05 GMT+0000 (Coordinated Universal Time)",
      "Tue Jan 02 2024",
      "03:04:05 GMT+0000 (Coordinated Universal Time)",
      "Tue Jan 02 2024 03:04:05 GMT+0000 (Coordinated Universal Time)",
      "Fri Jan 01 -0001 00:00:00 GMT+0000 (Coordinated Universal Time)",
    ]);
    expect(
      read(
        "const e = new Date(0); e.setHours(10); e.setDate(5); [e.toISOString(), new Date(NaN).toString(), new Date(NaN).getTimezoneOffset()]",
      ),
    ).toEqual(["1970-01-05T10:00:00.000Z", "Invalid Date", Number.NaN]);
  });

  it("dates from components and zoneless texts are UTC; texts with a zone keep it", () => {
    const read = deterministicRealm();
    expect(
      read(`[
        new Date(2024, 0, 2, 3, 4).toISOString(),
        new Date('2024-01-02T03:04').toISOString(),
        Date.parse('Jan 2 2024 03:04'),
        Date.parse('2024-01-02'),
        Date.parse('2024-01-02T03:04:00+05:30'),
        Date.parse('Tue Jan 02 2024 03:04:05 GMT+0100 (Central European Standard Time)'),
        Date.parse('2024-01-02T03:04Z'),
      ]`),
    ).toEqual([
      "2024-01-02T03:04:00.000Z",
      "2024-01-02T03:04:00.000Z",
      Date.UTC(2024, 0, 2, 3, 4),
      Date.UTC(2024, 0, 2),
      Date.UTC(2024, 0, 1, 21, 34),
      Date.UTC(2024, 0, 2, 2, 4, 5),
      Date.UTC(2024, 0, 2, 3, 4),
    ]);
  });

  it("toLocaleString and Intl.DateTimeFormat default to UTC; a named zone is kept", () => {
    const read = deterministicRealm();
    expect(
      read(`[
        new Date().toLocaleString('en-US'),
        new Date().toLocaleTimeString('en-US', { hour12: false }),
        new Intl.DateTimeFormat('en-US', { timeStyle: 'short' }).resolvedOptions().timeZone,
        new Date().toLocaleString('en-US', { timeZone: 'Asia/Tokyo' }),
        Intl.DateTimeFormat('en-US', { hour: 'numeric', hour12: false }).format(new Date()),
      ]`),
    ).toEqual(["1/2/2024, 3:04:05 AM", "03:04:05", "UTC", "1/2/2024, 12:04:05 PM", "03"]);
  });

  it("format() and formatToParts() without a date read the execution's clock, not the real one", () => {
    const read = deterministicRealm();
    expect(read("new Intl.DateTimeFormat('en-US', { dateStyle: 'short', timeStyle: 'medium' }).format()")).toBe(
      "1/2/24, 3:04:05 AM",
    );
    expect(
      read("new Intl.DateTimeFormat('en-US', { year: 'numeric' }).formatToParts().map((part) => part.value).join('')"),
    ).toBe("2024");
    expect(
      read(
        "const f = new Intl.DateTimeFormat('en-US'); [f.format === f.format, f.format(0), [1, 2].map(f.format).length]",
      ),
    ).toEqual([true, "1/1/1970", 2]);
  });

  it("a hostile timeZone getter is read once: it cannot switch the zone back to the host's", () => {
    const read = deterministicRealm();
    expect(
      read(
        "let reads = 0; const options = { get timeZone() { reads++; return reads === 1 ? undefined : 'Asia/Kolkata'; } }; [new Date(0).toLocaleString('en-US', options), reads]",
      ),
    ).toEqual(["1/1/1970, 12:00:00 AM", 1]);
  });
});
