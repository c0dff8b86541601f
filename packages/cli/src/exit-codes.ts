/**
 * What the `codemode` command's exit status means. Scripts branch on these, so they are stable;
 * docs/operating.md lists them.
 */
export const EXIT_CODES = {
  /** Done. For `approve` and `recover`: the run completed or paused at its next approval. */
  ok: 0,
  /**
   * The run failed: its program ended in error after `approve`/`recover`, a revert of `rollback`
   * failed, or `replay-check` could not run a stored program (and none diverged).
   */
  runFailed: 1,
  /** The command line was wrong: an unknown command or option, a missing argument, a bad number. */
  usage: 2,
  /** No execution (or pending action) with that id in the store. */
  notFound: 3,
  /** Not possible in the run's current state: not paused, another action pending, already decided, a connector missing. */
  conflict: 4,
  /** Another process holds the run right now (a pass or a decision under way): try again shortly. */
  busy: 5,
  /** The config module could not be found or loaded, or does not export a runtime (a store it opens that fails is `store`). */
  config: 6,
  /** The store could not be reached or opened (STORAGE_ERROR), also while the config was loading it. */
  store: 7,
  /** `replay-check`: a stored run no longer replays against the current code, tools or schemas. */
  diverges: 8,
  /**
   * `approve`, `deny`, `decide`: the runtime refused the decisions (INVALID_DECISION): edited
   * arguments the tool's schema refuses, or a malformed decision. Nothing was changed.
   */
  invalidDecision: 9,
  /** A bug: something failed that none of the above describes. */
  internal: 70,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
