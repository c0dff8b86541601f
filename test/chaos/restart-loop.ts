/**
 * Restarts the store while the fleet runs: up for 5–10 s, then stopped — by kill (SIGKILL) and
 * cleanly (shutdown / `pg_ctl stop -m fast`) in turn — and started again after 0–2 s.
 */
import type { StopMode, StoreServer } from "./managed-server.ts";
import { sleep } from "./timing.ts";

export interface Restart {
  mode: StopMode;
  /** When the stop was asked. */
  at: number;
  /** From the stop asked to the start asked: the stop itself and the 0–2 s wait. */
  downMs: number;
  /** From the stop asked to the server answering again. */
  unavailableMs: number;
}

export interface RestartLoop {
  readonly restarts: Restart[];
  /** Ends the loop once the restart under way (if any) is over: the store is up afterwards. */
  stop(): Promise<void>;
}

export interface RestartOptions {
  /** How long the store stays up between restarts (ms, a random time in this range). */
  upMs: [number, number];
  /** How long it stays down after it stopped (ms, a random time in this range). */
  downMs: [number, number];
}

export function startRestartLoop(server: StoreServer, options: RestartOptions): RestartLoop {
  const restarts: Restart[] = [];
  let stopping = false;
  let wake: (() => void) | undefined;
  const between = ([low, high]: [number, number]) => low + Math.random() * (high - low);
  const loop = (async () => {
    for (let round = 0; ; round++) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, between(options.upMs));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (stopping) return;
      // Listed from the moment it begins (unavailable until further notice), so a death meanwhile is placed in it.
      const restart: Restart = {
        mode: round % 2 === 0 ? "kill" : "clean",
        at: Date.now(),
        downMs: 0,
        unavailableMs: Number.POSITIVE_INFINITY,
      };
      restarts.push(restart);
      await server.stop(restart.mode);
      await sleep(between(options.downMs));
      restart.downMs = Date.now() - restart.at;
      // A server that cannot start again fails the test (stop() rethrows it).
      await server.start();
      restart.unavailableMs = Date.now() - restart.at;
    }
  })();
  loop.catch(() => undefined);
  return {
    restarts,
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}

/** Restarts in one line: count by mode, total and longest time down and unavailable. */
export function describeRestarts(restarts: Restart[]): string {
  const kills = restarts.filter((restart) => restart.mode === "kill").length;
  const down = restarts.reduce((sum, restart) => sum + restart.downMs, 0);
  const unavailable = restarts.reduce((sum, restart) => sum + restart.unavailableMs, 0);
  const longest = Math.max(0, ...restarts.map((restart) => restart.unavailableMs));
  return `${restarts.length} restarts (${kills} by SIGKILL, ${restarts.length - kills} clean), down ${seconds(down)} in all, unavailable ${seconds(unavailable)} in all (longest ${seconds(longest)})`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * For each restart, how long after the store answered again the fleet did its next piece of work
 * (the next effect a tool applied), in ms: "back to work". Restarts after which nothing happened
 * before the next one are left out.
 */
export function backToWork(restarts: readonly Restart[], effectTimes: readonly number[]): number[] {
  const gaps: number[] = [];
  restarts.forEach((restart, index) => {
    if (!Number.isFinite(restart.unavailableMs)) return;
    const back = restart.at + restart.unavailableMs;
    const next = restarts[index + 1]?.at ?? Number.POSITIVE_INFINITY;
    const first = effectTimes.find((time) => time >= back);
    if (first !== undefined && first < next) gaps.push(first - back);
  });
  return gaps;
}
