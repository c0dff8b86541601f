/**
 * A config as most are written: the SQLite store opens while the module is imported, at the path
 * the environment names (a test points it at a file that cannot be opened).
 */
import { createCodemodeRuntime } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { tickets } from "./tickets.ts";

const storage = sqliteStorage(process.env.CODEMODE_TEST_SQLITE_PATH ?? "");
export default createCodemodeRuntime({ connectors: [tickets], storage });
export const close = () => storage.close();
