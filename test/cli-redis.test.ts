/**
 * The `codemode` bin against a real Redis (the stories are in cli-fixtures/store-stories.ts;
 * test/cli.test.ts has the failures an operator meets). Needs `npm run build` first.
 */
import { REDIS_URL } from "./cli-fixtures/run-cli.ts";
import { cliStoreStories } from "./cli-fixtures/store-stories.ts";

cliStoreStories("Redis", () => REDIS_URL);
