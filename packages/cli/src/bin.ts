#!/usr/bin/env node
import { errorMessage } from "@codemode/core/adapters";
import { EXIT_CODES } from "./exit-codes.js";
// codemode: operate a Code Mode runtime from a terminal (docs/operating.md in the repository).
import { runCli } from "./program.js";

// stdout carries the result (a table, or JSON): whatever the config or its connectors print goes to stderr.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

// node:sqlite is experimental on Node 22 and says so, on stderr, in every command that opens a
// SQLite store: a listing or an approval would print a warning about nothing the operator did.
// That one warning is dropped; every other warning is printed as Node prints it.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === "string" ? warning : warning.message;
  const first = rest[0];
  const type = typeof first === "string" ? first : (first as { type?: unknown } | undefined)?.type;
  if (type === "ExperimentalWarning" && /SQLite/i.test(text)) return;
  (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`codemode: unexpected failure: ${errorMessage(error)}\n`);
    process.exit(EXIT_CODES.internal);
  },
);
