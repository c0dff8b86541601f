import type { ExecutionState } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { type ProgressNote, RunReporter } from "./progress.js";

export interface ProgressFollowersOptions {
  /** Read for each followed run; any store, so a run approved and resumed in another process is followed too. */
  runtime: Pick<CodemodeRuntime, "execution">;
  /**
   * How often a running run is read while it moves. Default 150 ms. A read that finds nothing new
   * (a call that takes its time) doubles the wait, up to `maxRunningPollMs` (default 2 s).
   */
  pollMs?: number;
  maxRunningPollMs?: number;
  /** The first wait before a paused run is read again; it doubles while the run stays paused. Default 2 s. */
  pausedPollMs?: number;
  /** The longest wait between two reads of a run that stays paused. Default 60 s. */
  maxPausedPollMs?: number;
  /**
   * Reads of paused runs per second, at most, over every follower of this server: a thousand
   * paused tasks cost the store no more than this (a read of a run is three store calls: its
   * record, its code and log, its result). Default 1.
   */
  pausedReadsPerSecond?: number;
  /** Runs followed at once by the whole server; a task beyond them gets no progress (tasks/get still answers). Default 1,000. */
  maxFollowers?: number;
  /** Runs followed at once for one connection (one session). Default 32. */
  maxFollowersPerOwner?: number;
  /** Console lines sent at most, over a whole run. Default 50. */
  maxConsoleLines?: number;
  /** Characters of one console line sent at most. Default 200. */
  maxLineLength?: number;
}

/** One client's wish to hear a run's progress until it ends. */
export interface FollowRequest {
  executionId: string;
  /** The connection it comes from: its followers are counted together and released with it. */
  owner: object;
  /** Sends one notification; a rejection (the connection is gone) ends this follower. */
  send: (note: ProgressNote) => Promise<void>;
  /** How long the run is followed at most. */
  maxFollowMs: number;
}

/** The followers of the runs that MCP tasks report progress for, sharing their reads. */
export interface ProgressFollowers {
  /** Follows a run; false (and one note saying so) when a cap is reached. */
  follow(request: FollowRequest): boolean;
  /** Ends every follower of a connection (it closed). */
  release(owner: object): void;
  /**
   * A run was just decided in this process: read it now rather than when the budget comes to it,
   * so that its followers hear the rest of it at once. Approvals elsewhere are seen at the next
   * budgeted read.
   */
  nudge(executionId: string): void;
  /** Followers at present. */
  followers(): number;
  /** Runs read at present (one watch per run, however many follow it). */
  watches(): number;
  /** Ends every follower and stops reading. */
  close(): void;
}

type Follower = {
  owner: object;
  watch: Watch;
  send: FollowRequest["send"];
  until: number;
  progress: number;
  /** The sends of this follower, one after another, so notes arrive in order. */
  queue: Promise<void>;
};

/** One run's reads, shared by all who follow it. */
type Watch = {
  executionId: string;
  reporter: RunReporter;
  followers: Set<Follower>;
  /** Waiting on the shared budget for paused runs (rather than on a timer of its own). */
  paused: boolean;
  /** When a paused run is due to be read again, and how long it waited last. */
  due: number;
  backoffMs: number;
  /** How long a running run waits for its next read (`pollMs`, doubled while nothing changes). */
  runningWaitMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  reading: boolean;
};

/**
 * Progress for MCP tasks, bounded (issue 43): a run has one watch however many follow it; a
 * running run is read every `pollMs` while it moves (less and less often while it waits on a slow
 * call); a paused run is read on a shared budget of
 * `pausedReadsPerSecond`, each less often the longer it stays paused (2 s, 4 s, … 60 s), because
 * an idle client may leave hundreds of paused tasks behind and each read brings the whole
 * execution; followers are capped per connection and per server. A store error is not the end of
 * a run: the watch waits as a paused one does and reads again.
 *
 * @example
 * const followers = createProgressFollowers({ runtime });
 * followers.follow({ executionId, owner: server, send, maxFollowMs: ttl });
 * server.onclose = () => followers.release(server);
 */
export function createProgressFollowers(options: ProgressFollowersOptions): ProgressFollowers {
  const pollMs = options.pollMs ?? 150;
  const maxRunningPollMs = Math.max(pollMs, options.maxRunningPollMs ?? 2_000);
  const pausedPollMs = options.pausedPollMs ?? 2_000;
  const maxPausedPollMs = Math.max(pausedPollMs, options.maxPausedPollMs ?? 60_000);
  const readsPerSecond = options.pausedReadsPerSecond ?? 1;
  const maxFollowers = options.maxFollowers ?? 1_000;
  const maxPerOwner = options.maxFollowersPerOwner ?? 32;
  if (!(readsPerSecond > 0)) throw new TypeError("pausedReadsPerSecond must be a positive number");
  const watches = new Map<string, Watch>();
  const perOwner = new Map<object, Set<Follower>>();
  let count = 0;
  let closed = false;

  const detach = (follower: Follower) => {
    const { watch } = follower;
    if (!watch.followers.delete(follower)) return;
    count -= 1;
    const owned = perOwner.get(follower.owner);
    owned?.delete(follower);
    if (owned?.size === 0) perOwner.delete(follower.owner);
    if (watch.followers.size === 0) drop(watch);
  };

  const drop = (watch: Watch) => {
    clearTimeout(watch.timer);
    for (const follower of [...watch.followers]) detach(follower);
    if (watches.get(watch.executionId) === watch) watches.delete(watch.executionId);
    if (watches.size === 0) stopTicker();
  };

  const deliver = (watch: Watch, messages: string[]) => {
    const now = Date.now();
    for (const follower of [...watch.followers]) {
      if (now > follower.until) {
        detach(follower);
        continue;
      }
      for (const message of messages) {
        follower.progress += 1;
        const note = { progress: follower.progress, message };
        follower.queue = follower.queue
          .then(() => (follower.watch.followers.has(follower) ? follower.send(note) : undefined))
          .catch(() => detach(follower));
      }
    }
  };

  const waitPaused = (watch: Watch, first: boolean) => {
    watch.paused = true;
    watch.backoffMs = first ? pausedPollMs : Math.min(maxPausedPollMs, watch.backoffMs * 2);
    watch.due = Date.now() + watch.backoffMs;
    startTicker();
  };

  const read = async (watch: Watch) => {
    if (watch.reading || closed) return;
    watch.reading = true;
    const wasPaused = watch.paused;
    watch.paused = false;
    let state: ExecutionState | null;
    try {
      state = await options.runtime.execution(watch.executionId);
    } catch {
      // An outage is not the run's end: read it again later, as a paused run is.
      watch.reading = false;
      if (watches.get(watch.executionId) === watch) waitPaused(watch, !wasPaused);
      return;
    }
    watch.reading = false;
    if (watches.get(watch.executionId) !== watch) return;
    if (!state) return drop(watch);
    const messages = watch.reporter.notes(state);
    deliver(watch, messages);
    if (watch.followers.size === 0) return;
    if (state.status === "running") {
      // A run that moves is read often; one waiting on a slow call less and less often.
      watch.runningWaitMs = runningWait(
        watch.runningWaitMs,
        messages.length > 0 || wasPaused,
        pollMs,
        maxRunningPollMs,
      );
      watch.timer = setTimeout(() => void read(watch), watch.runningWaitMs);
      return;
    }
    if (state.status === "paused") return waitPaused(watch, !wasPaused);
    // Ended: what the last read said is on its way; the followers are done once it is sent.
    for (const follower of [...watch.followers]) {
      void follower.queue.then(() => detach(follower));
    }
    watches.delete(watch.executionId);
  };

  const ticker = budgetTicker(readsPerSecond, () => {
    const next = duePausedWatch(watches.values());
    if (next) void read(next);
  });
  const startTicker = () => {
    if (!closed) ticker.start();
  };
  const stopTicker = () => ticker.stop();

  return {
    follow(request) {
      if (closed) return false;
      const full = capReached(perOwner.get(request.owner)?.size ?? 0, maxPerOwner, count, maxFollowers);
      if (full) {
        void request
          .send({ progress: 1, message: `progress: not followed (${full}, the most it may); poll tasks/get` })
          .catch(() => undefined);
        return false;
      }
      const existing = watches.get(request.executionId);
      const watch = existing ?? newWatch(request.executionId, options);
      const follower: Follower = {
        owner: request.owner,
        watch,
        send: request.send,
        until: Date.now() + request.maxFollowMs,
        progress: 0,
        queue: Promise.resolve(),
      };
      count += 1;
      const ownerFollowers = perOwner.get(request.owner) ?? new Set<Follower>();
      ownerFollowers.add(follower);
      perOwner.set(request.owner, ownerFollowers);
      watch.followers.add(follower);
      if (existing) return true;
      watches.set(request.executionId, watch);
      void read(watch);
      return true;
    },
    release(owner) {
      for (const follower of [...(perOwner.get(owner) ?? [])]) detach(follower);
    },
    nudge(executionId) {
      const watch = watches.get(executionId);
      if (watch?.paused) void read(watch);
    },
    followers: () => count,
    watches: () => watches.size,
    close() {
      closed = true;
      stopTicker();
      for (const watch of [...watches.values()]) drop(watch);
    },
  };
}

/** The paused run waiting longest past its due time, if any is due. */
function duePausedWatch(watches: Iterable<Watch>): Watch | undefined {
  let next: Watch | undefined;
  const now = Date.now();
  for (const watch of watches) {
    if (watch.paused && !watch.reading && watch.due <= now && (!next || watch.due < next.due)) next = watch;
  }
  return next;
}

/** Calls `onTick` `perSecond` times a second while started; it keeps no process alive (runs that wait for a person). */
function budgetTicker(perSecond: number, onTick: () => void): { start(): void; stop(): void } {
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    start() {
      if (timer) return;
      timer = setInterval(onTick, 1000 / perSecond);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

function newWatch(executionId: string, options: ProgressFollowersOptions): Watch {
  return {
    executionId,
    reporter: new RunReporter(options),
    followers: new Set(),
    paused: false,
    due: 0,
    backoffMs: 0,
    runningWaitMs: 0,
    timer: undefined,
    reading: false,
  };
}

/** The next wait of a running run: `pollMs` when it moved, else twice the last, up to `maxMs`. */
function runningWait(lastMs: number, moved: boolean, pollMs: number, maxMs: number): number {
  return moved ? pollMs : Math.min(maxMs, Math.max(pollMs, lastMs * 2));
}

/** Why one more follower is refused (a cap is reached), or "" when it is not. */
function capReached(owned: number, maxPerOwner: number, count: number, maxFollowers: number): string {
  if (owned >= maxPerOwner) return `this connection follows ${owned} runs`;
  return count >= maxFollowers ? `this server follows ${count} runs` : "";
}
