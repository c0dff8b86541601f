/**
 * The bench programs through @utcp/code-mode, as its README sets it up: every tool is a plain
 * function registered with @utcp/direct-call, one manual per connector (so `crm.getCustomer`
 * keeps its name: UTCP names a tool `<manual>.<tool>`), one client, and each pass is one
 * `callToolChain` (a fresh isolated-vm 6 isolate; tool calls are synchronous `applySyncPromise`
 * calls, which the programs' `await` accepts unchanged).
 *
 * Needs `node --no-node-snapshot` (isolated-vm 6 on Node 20+). The SDK and the direct-call
 * protocol each `console.log` a line per tool call: that is the library's cost, left in, written
 * to wherever stdout goes (bench/peers.bench.ts sends it to /dev/null).
 */
import { readFileSync } from "node:fs";
import { CodeModeUtcpClient } from "@utcp/code-mode";
import { addFunctionToUtcpDirectCall } from "@utcp/direct-call";
import { runPeer, toolsOf } from "./runner.ts";

const version = (name: string) =>
  (
    JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")) as {
      version: string;
    }
  ).version;

/** direct-call's registry is global to the process: each prepared program registers its callables under its own prefix. */
let prepared = 0;

await runPeer(
  { library: "@utcp/code-mode", version: version("@utcp/code-mode"), sandbox: `isolated-vm ${version("isolated-vm")}` },
  async (program) => {
    const prefix = `program${++prepared}`;
    const client = await CodeModeUtcpClient.create();
    for (const [connector, tools] of Map.groupBy(toolsOf(program), ([connector]) => connector)) {
      for (const [, method, inputs] of tools) {
        // direct-call passes the values of the argument object as positional arguments.
        const names = Object.keys(inputs);
        addFunctionToUtcpDirectCall(`${prefix}.${connector}.${method}`, async (...values: unknown[]) =>
          program.answer(connector, method, Object.fromEntries(names.map((name, index) => [name, values[index]]))),
        );
      }
      addFunctionToUtcpDirectCall(`${prefix}.${connector}`, async () => ({
        utcp_version: "1.0.0",
        manual_version: "1.0.0",
        tools: tools.map(([, method, inputs]) => ({
          name: method,
          description: `${connector}.${method}`,
          inputs: {
            type: "object",
            properties: Object.fromEntries(Object.entries(inputs).map(([name, type]) => [name, { type }])),
            required: Object.keys(inputs),
          },
          outputs: { type: "object", properties: {} },
          tags: [],
          tool_call_template: { call_template_type: "direct-call", callable_name: `${prefix}.${connector}.${method}` },
        })),
      }));
      const registration = await client.registerManual({
        name: connector,
        call_template_type: "direct-call",
        callable_name: `${prefix}.${connector}`,
      });
      if (!registration.success)
        throw new Error(`@utcp/code-mode did not register ${connector}: ${registration.errors.join("; ")}`);
    }
    return async () => {
      const { result, logs } = await client.callToolChain(program.body);
      // callToolChain reports a failure as a null result and an "[ERROR]" log line.
      const failure = logs.find((line) => line.startsWith("[ERROR]"));
      if (failure !== undefined) throw new Error(`@utcp/code-mode failed: ${failure}`);
      return JSON.stringify(result);
    };
  },
);
