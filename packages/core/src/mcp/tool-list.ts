import type { Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema } from "../connectors/define-connector.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { modelToolDescriptors } from "./model-tools.js";
import * as schemas from "./server-schemas.js";

// The tools a Code Mode MCP server lists: search, describe and execute for agents, the tools the
// model calls directly, and with `operatorTools` those that decide pauses.

/** What a tool does to the world, as MCP annotations. */
const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

/** One tool's descriptor: its schemas are ours (server-schemas.ts), typed as the SDK wants them. */
function tool(
  name: string,
  title: string,
  description: string,
  [input, output]: [JsonSchema, JsonSchema],
  annotations: ToolAnnotations,
): Tool {
  return {
    name,
    title,
    description,
    inputSchema: input as Tool["inputSchema"],
    outputSchema: output as Tool["outputSchema"],
    annotations,
  };
}

const DECIDES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: true,
};

/** The operator tools (`operatorTools`): name, title, description, schemas and annotations of each. */
const OPERATOR_TOOLS: Array<Parameters<typeof tool>> = [
  [
    "pending",
    "Pending approvals",
    "Actions of paused programs that wait for a person's approval, newest first, a page at a time.",
    [schemas.pendingInputSchema, schemas.pendingOutputSchema],
    READS,
  ],
  [
    "approve",
    "Approve a pending action",
    "For operators: runs one pending action of a paused program and resumes it (other pending actions stay pending); answers the new outcome.",
    [schemas.approveInputSchema, schemas.outcomeSchema],
    DECIDES,
  ],
  [
    "reject",
    "Reject a pending action",
    "For operators: the pending action does not run and the program ends rejected; calls before it stay done.",
    [schemas.rejectInputSchema, schemas.outcomeSchema],
    { ...DECIDES, destructiveHint: false, openWorldHint: false },
  ],
  [
    "decide",
    "Decide pending actions",
    "For operators: approve, deny (the call rejects inside the program, which may go on) or edit (run with other arguments) pending actions of one paused program at once; undecided ones stay pending. Answers the new outcome.",
    [schemas.decideInputSchema, schemas.outcomeSchema],
    DECIDES,
  ],
];

/** The tools, described afresh on every listing: connectors can change (MCP list_changed). */
export function toolList(runtime: CodemodeRuntime, settings: { operatorTools: boolean; tasks?: object }): Tool[] {
  const tools: Tool[] = [
    tool(
      "search",
      "Search tools",
      "Find connector methods and saved snippets for what you need; answers paths to pass to describe.",
      [schemas.searchInputSchema, schemas.searchOutputSchema],
      READS,
    ),
    tool(
      "describe",
      "Describe a tool",
      "TypeScript declarations of a connector or method (\"notes.add_note\"), or a snippet's source. Check a method's types before calling it.",
      [schemas.describeInputSchema, schemas.describeOutputSchema],
      READS,
    ),
    {
      ...tool(
        "execute",
        "Run a program",
        `${runtime.modelDescription()}${settings.tasks ? schemas.EXECUTE_TASKS_NOTE : ""}`,
        [schemas.executeInputSchema, schemas.outcomeSchema],
        { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      ),
      // A client that supports tasks may run it as one: a long run or a pause then outlasts the call.
      ...(settings.tasks ? { execution: { taskSupport: "optional" as const } } : {}),
    },
  ];
  tools.push(...modelToolDescriptors(runtime));
  if (!settings.operatorTools) return tools;
  tools.push(...OPERATOR_TOOLS.map((descriptor) => tool(...descriptor)));
  return tools;
}
