/**
 * For the containment stories (R-SB-8): finds the sandbox processes of this process, so a test
 * can do to them what a hostile program would (crash them, freeze them), and a gate a tool waits
 * on until the test opens it.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The ids of this process's sandbox processes (children running hosts/sandbox-process.js), from /proc. */
export function sandboxProcessIds(): number[] {
  const ids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      // The parent's id is the second field after the command, which sits in parentheses.
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent !== process.pid) continue;
      if (readFileSync(`/proc/${name}/cmdline`, "latin1").includes("sandbox-process.js")) ids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return ids;
}

/** Sends `signal` to every sandbox process of this process; resolves with how many got it. */
export function signalSandboxProcesses(signal: NodeJS.Signals): number {
  let sent = 0;
  for (const id of sandboxProcessIds()) {
    try {
      process.kill(id, signal);
      sent++;
    } catch {
      // Ended meanwhile.
    }
  }
  return sent;
}

/** A promise a tool awaits until `open()`; `waiting` counts the calls that reached it. */
export function gate(): { wait: () => Promise<string>; open: () => void; waiting: () => number } {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  let waiting = 0;
  return {
    wait: async () => {
      waiting++;
      await opened;
      return "through";
    },
    open: () => release(),
    waiting: () => waiting,
  };
}

/** Resolves once `condition()` holds, checking every 20 ms, or rejects after `ms`. */
export async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > ms) throw new Error(`not reached within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
