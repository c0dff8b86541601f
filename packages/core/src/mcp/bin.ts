#!/usr/bin/env node
// codemode-mcp: serves a Code Mode runtime over MCP, for clients that launch a command.
import { parseArgs } from "node:util";
import { errorMessage } from "../error-message.js";
import { type CodemodeMcpServerOptions, createCodemodeMcpServer } from "./create-codemode-mcp-server.js";
import { loadCodemodeConfig } from "./load-config.js";

const USAGE = `Usage: codemode-mcp --config <module> [options]

Serves the Code Mode runtime that <module> exports (a runtime, or a function returning one) over
MCP on stdin/stdout, so an MCP client can launch it as a command.

Options:
  -c, --config <module>   the config module (.js, .mjs or .ts)
      --operator-tools    also serve pending, approve and reject (for people, not agents)
      --elicitation       ask the person at the client to approve a pause (elicitation);
                          trusts the client to show the question to a person
      --no-elicitation    answer pauses, for an operator to decide (the default)
      --http <port>       serve Streamable HTTP on 127.0.0.1:<port>/mcp instead of stdio
      --host <address>    with --http: the address to bind (loopback unless --allow-remote)
      --allow-remote      with --http: allow a non-loopback address (no authentication!)
  -h, --help              this text`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: "string", short: "c" },
      "operator-tools": { type: "boolean" },
      elicitation: { type: "boolean" },
      "no-elicitation": { type: "boolean" },
      http: { type: "string" },
      host: { type: "string" },
      "allow-remote": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || !values.config) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(values.help ? 0 : 2);
  }
  // stdout carries the protocol: whatever the config or its connectors print goes to stderr.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const { runtime, serverOptions } = await loadCodemodeConfig(values.config);
  const options: CodemodeMcpServerOptions = { ...serverOptions };
  if (values["operator-tools"]) options.operatorTools = true;
  if (values.elicitation && values["no-elicitation"])
    throw new TypeError("--elicitation and --no-elicitation contradict each other");
  if (values.elicitation) options.elicitApproval = true;
  if (values["no-elicitation"]) options.elicitApproval = false;
  const mcp = createCodemodeMcpServer(runtime, options);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await mcp.close();
    await runtime.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void stop());
  process.once("SIGTERM", () => void stop());
  if (values.http !== undefined) {
    const port = Number(values.http);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new TypeError(`--http needs a port number, not ${JSON.stringify(values.http)}`);
    const listener = await mcp.listen({
      port,
      ...(values.host ? { host: values.host } : {}),
      allowRemote: values["allow-remote"] === true,
    });
    process.stderr.write(`codemode-mcp: serving ${listener.url}\n`);
    return;
  }
  // The client closing our stdin is how a launched server is told to go: listened for before the
  // first message is read, which may be the end already.
  process.stdin.once("end", () => void stop());
  process.stdin.once("close", () => void stop());
  await mcp.serveStdio();
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`codemode-mcp: ${errorMessage(error)}\n`);
  process.exit(1);
});
