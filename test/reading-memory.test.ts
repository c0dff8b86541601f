/**
 * Hardening round two, finding 10: reading a program costs memory `memoryMb` does not count
 * (about 230 MB for a 0.9 MB program of 160,000 names: the host's parse tree, V8's parse and
 * compile), and with `sandboxThreads` every thread read one at once (four at once: +890 MB here).
 * Large programs now go to one thread and take turns across the whole process.
 * Measured in child processes of their own (the BUILT packages): the growth of the peak resident
 * set when four large programs arrive at once, against one alone.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const READ_LARGE = fileURLToPath(new URL("./memory-processes/read-large.ts", import.meta.url));

function run(count: number): { beforeMb: number; afterMb: number; mostReadAtOnce: number; programChars: number } {
  const output = execFileSync(process.execPath, [READ_LARGE, String(count)], { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(output.trim().split("\n").at(-1)!);
}

describe("reading large programs with sandboxThreads (hardening round two, finding 10)", () => {
  it("four 0.9 MB programs at once with four threads are read one at a time: the peak grows far less than four times one", {
    timeout: 180_000,
  }, () => {
    const one = run(1);
    const four = run(4);
    const grewOne = one.afterMb - one.beforeMb;
    const grewFour = four.afterMb - four.beforeMb;
    console.log(
      `reading ${one.programChars.toLocaleString("en")} characters: peak +${grewOne} MB for one program, +${grewFour} MB for four at once (at most ${four.mostReadAtOnce} read at once)`,
    );
    expect(four.mostReadAtOnce).toBe(1);
    // Reading is the bulk of it: one program must cost something measurable for the bound to mean anything.
    expect(grewOne).toBeGreaterThan(100);
    // Four read at once cost about four times one (3.7× before); in turns, what stays is the isolates' own heaps.
    expect(grewFour).toBeLessThan(grewOne * 2);
  });
});
