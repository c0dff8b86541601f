/**
 * R-RP-4, R-RP-4b, `runtime.recover`: a host killed inside a call is recovered by another process
 * over the same store. Real child processes (SIGKILL), real stores. Each worker is
 * `node test/recover-processes/worker.ts`, importing the BUILT packages: run `npm run build`
 * before these tests (CI does). The stories are in recover-processes/stories.ts, one file per
 * store so the stores run side by side.
 */
import { recoverStories } from "./recover-processes/stories.ts";

recoverStories("postgres");
