/**
 * The `codemode` bin against a real SQLite file (the stories are in cli-fixtures/store-stories.ts;
 * test/cli.test.ts has the failures an operator meets). Needs `npm run build` first.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { scratchDirectory } from "./cli-fixtures/run-cli.ts";
import { cliStoreStories } from "./cli-fixtures/store-stories.ts";

const directory = scratchDirectory();
cliStoreStories("SQLite", () => `sqlite:${join(directory, `runs-${randomUUID()}.sqlite`)}`);
