// @codemode/storage: the types every store shares. Each store lives at its own subpath, so that
// importing one never loads another's driver: "@codemode/storage/sqlite", "/redis", "/postgres",
// "/memory"; the conformance suite is "@codemode/storage/testing".
export type { CodemodeStorage, StorageOptions } from "./storage.js";
