/**
 * Many workers, one store (R-AP-6, R-ST-3, R-ST-4, R-RE-2): real child processes share a Redis,
 * a PostgreSQL database or a SQLite file, and race each other the way deployed workers would.
 * Each worker is `node test/storage-processes/worker.ts`, importing the BUILT packages: run
 * `npm run build` before these tests (CI does). The stories are in storage-processes/stories.ts,
 * one file per store so the stores run side by side.
 *
 * The connector counts every applied action on the real store, so "exactly once" is checked
 * against the store, not against what either process believes.
 */
import { storageProcessStories } from "./storage-processes/stories.ts";

storageProcessStories("redis");
