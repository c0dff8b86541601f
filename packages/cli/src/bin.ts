#!/usr/bin/env node
import { errorMessage } from "@codemode/core/adapters";
import { EXIT_CODES } from "./exit-codes.js";
// codemode: operate a Code Mode runtime from a terminal. See docs/operating.md.
import { runCli } from "./program.js";

// stdout carries the result (a table, or JSON): whatever the config or its connectors print goes to stderr.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`codemode: unexpected failure: ${errorMessage(error)}\n`);
    process.exit(EXIT_CODES.internal);
  },
);
