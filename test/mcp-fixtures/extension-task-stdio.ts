/**
 * The SEP-2663 task server of extension-task-server.ts over stdio (SDK 2's `serveStdio`), run as
 * a child process: `node test/mcp-fixtures/extension-task-stdio.ts [workMs]`. Its `records` tool
 * answers what it saw, as the test cannot read this process's memory.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createExtensionTaskServer } from "./extension-task-server.ts";

const workMs = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
const { factory } = createExtensionTaskServer({ withRecordsTool: true, ...(workMs === undefined ? {} : { workMs }) });
serveStdio(factory);
