import type { ExecutionEndStatus } from "../outcome.js";

/** A JSON Schema object (draft 2020-12 or 07) describing a tool's single argument or result. */
export type JsonSchema = { [key: string]: unknown };

/** The Standard Schema interface (zod 4, valibot, arktype…), just what validation needs. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}
type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** What a tool gets besides its argument (R-CON-1). */
export interface ToolContext {
  /** Stable for the life of the execution, across passes and processes. */
  executionId: string;
  /** The call's sequence number in the execution. */
  seq: number;
  /** `${executionId}:${seq}`: the same on every attempt of this call; pass it to APIs that dedupe. */
  idempotencyKey: string;
  connector: string;
  method: string;
  /**
   * Aborted when the run is cancelled (`runtime.cancel`) while the call runs: a long call should
   * stop and reject. Present on calls a pass makes.
   */
  signal?: AbortSignal;
  /**
   * When the pass's time limit (`timeoutMs`) runs out, in epoch milliseconds. A call may outlive
   * its pass (it is recorded when it ends, R-RP-7), but a wait that should count against the
   * pass's limit ends here. Present on calls a pass makes.
   */
  deadline?: number;
}

export interface ToolDefinition<Args = Record<string, unknown>, Result = unknown> {
  /** Shown to the model by search/describe. */
  description?: string;
  /** JSON Schema or any Standard Schema; arguments are checked against it before `execute`. */
  inputSchema?: JsonSchema | StandardSchemaV1;
  /** Describes the result for generated types. */
  outputSchema?: JsonSchema | StandardSchemaV1;
  /**
   * The call pauses the execution until `approve`. A function decides per call from the
   * arguments; if it throws, the call needs approval. Default false.
   */
  requiresApproval?: boolean | { bivariant(args: Args): boolean }["bivariant"];
  /**
   * Who may approve its calls (R-AP-11). "chat" (default): the application's own code, and a chat
   * (or an MCP client) the server issued the approval request to, where the runtime's
   * `chatApprovals` allows it. "operator": only the application's own code (`runtime.approve`
   * behind an operator's screen, the CLI, the inbox); a chat's or a client's approval or denial
   * of such a call is refused and nothing runs.
   */
  approvers?: "chat" | "operator";
  /**
   * "record" (default): the result is stored and replayed. "reexecute": only seq and arguments
   * are stored and the call runs again on every pass — for idempotent reads with large results.
   * Cannot be combined with `requiresApproval`.
   */
  replay?: "record" | "reexecute";
  /**
   * What happens to a call left `executing` by a host that died mid-call: "rerun" (default) runs
   * it again with the same idempotencyKey; "ask" puts it back to pending approval (R-RP-4b).
   */
  onInterrupted?: "rerun" | "ask";
  /**
   * The tool changes nothing (a lookup, a search): running it twice is harmless. A new call is
   * then not written ahead — one write instead of two — and its result is recorded without making
   * the program wait. If the host dies before that lands, the call simply runs again on the next
   * pass. Approval rules, validation and replay are unchanged. MCP's `readOnlyHint` maps to it.
   * Default false.
   */
  readOnly?: boolean;
  /**
   * Who calls the tool (R-CN-OA): "code" (programs the model writes; the default) and/or "model"
   * (the model directly, as a tool of its own next to the Code Mode tool: `runtime.callTool`, the
   * adapters' model tools, an MCP tool of its own). A tool without "code" is left out of the
   * program's globals, `codemode.search` and `describe`. Either way a call goes through the log
   * and the approvals.
   */
  callers?: readonly ToolCaller[];
  execute(args: Args, context: ToolContext): Promise<Result> | Result;
  /** Compensates an applied call during `rollback`. */
  revert?(args: Args, result: Result, context: ToolContext): Promise<void> | void;
}

/** Who may call a tool: programs ("code") or the model directly ("model"). */
export type ToolCaller = "code" | "model";

/** Whether programs may call the tool (`callers` includes "code", the default). */
export function codeMayCall(tool: Pick<ToolDefinition, "callers">): boolean {
  return tool.callers === undefined || tool.callers.includes("code");
}

/** Whether the model may call the tool directly (`callers` includes "model"). */
export function modelMayCall(tool: Pick<ToolDefinition, "callers">): boolean {
  return tool.callers?.includes("model") === true;
}

/**
 * Whether a call with these arguments pauses for approval: the tool's `requiresApproval`, or its
 * rule's answer. A rule that throws cannot decide, and a gated action must not go through on that.
 */
export function callNeedsApproval(tool: Pick<ToolDefinition, "requiresApproval">, args: unknown): boolean {
  const rule = tool.requiresApproval;
  if (typeof rule !== "function") return rule === true;
  try {
    return rule(args as never) !== false;
  } catch {
    return true;
  }
}

export interface ConnectorDefinition {
  /** The global the model's code sees: a JavaScript identifier, unique per runtime, not "codemode". */
  name: string;
  /** Told to the model in the tool description. */
  instructions?: string;
  // Method signatures in ToolDefinition keep tools with narrower argument types assignable here.
  tools: Record<string, ToolDefinition>;
  /** Runs after every pass of every execution, on whichever process ran it. */
  onPassEnd?(executionId: string, status: "paused" | ExecutionEndStatus): Promise<void> | void;
  /** Runs when an execution becomes terminal. Must be idempotent. */
  disposeExecution?(executionId: string, status: ExecutionEndStatus): Promise<void> | void;
}

/** A checked connector definition. */
export interface Connector extends ConnectorDefinition {
  readonly kind: "codemode-connector";
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const RESERVED = new Set([
  "codemode",
  "console",
  "globalThis",
  "crypto",
  "fetch",
  "Date",
  "Math",
  "JSON",
  "Promise",
  "Object",
  "Array",
]);

/**
 * Declares a connector: a named group of tools the model's code sees as one global.
 *
 * @example
 * const github = defineConnector({
 *   name: "github",
 *   tools: {
 *     create_issue: {
 *       requiresApproval: true,
 *       execute: async (args: { repo: string; title: string }, ctx) => api.create(args, ctx.idempotencyKey),
 *     },
 *   },
 * });
 */
export function defineConnector(definition: ConnectorDefinition): Connector {
  const problems = connectorProblems(definition);
  if (problems.length > 0) throw new TypeError(`defineConnector: ${problems.join("; ")}`);
  return Object.freeze({
    ...definition,
    tools: Object.freeze({ ...definition.tools }),
    kind: "codemode-connector" as const,
  });
}

/** Configuration problems of one connector, as sentences naming the connector and tool. */
export function connectorProblems(definition: ConnectorDefinition): string[] {
  const problems: string[] = [];
  if (typeof definition !== "object" || definition === null) return ["a connector must be an object"];
  const { name, tools } = definition;
  if (typeof name !== "string" || !IDENTIFIER.test(name))
    problems.push(`connector name ${JSON.stringify(name)} is not a JavaScript identifier`);
  else if (RESERVED.has(name)) problems.push(`connector name "${name}" is reserved`);
  if (typeof tools !== "object" || tools === null) {
    problems.push(`connector "${String(name)}" needs a tools object`);
    return problems;
  }
  for (const [method, tool] of Object.entries(tools)) {
    const label = `${String(name)}.${method}`;
    if (!IDENTIFIER.test(method)) problems.push(`tool name "${label}" is not a JavaScript identifier`);
    if (typeof tool !== "object" || tool === null || typeof tool.execute !== "function") {
      problems.push(`tool "${label}" needs an execute function`);
      continue;
    }
    if (tool.replay !== undefined && tool.replay !== "record" && tool.replay !== "reexecute")
      problems.push(`tool "${label}" has an unknown replay policy ${JSON.stringify(tool.replay)}`);
    if (tool.onInterrupted !== undefined && tool.onInterrupted !== "rerun" && tool.onInterrupted !== "ask")
      problems.push(`tool "${label}" has an unknown onInterrupted policy ${JSON.stringify(tool.onInterrupted)}`);
    if (tool.replay === "reexecute" && tool.requiresApproval !== undefined && tool.requiresApproval !== false) {
      // R-CON-4: replaying an approved side effect would apply it again.
      problems.push(
        `tool "${label}" combines replay: "reexecute" with requiresApproval; an approved call must never run twice`,
      );
    }
    if (tool.approvers !== undefined && tool.approvers !== "chat" && tool.approvers !== "operator")
      problems.push(`tool "${label}" has approvers ${JSON.stringify(tool.approvers)}: "chat" or "operator"`);
    if (tool.readOnly !== undefined && typeof tool.readOnly !== "boolean")
      problems.push(`tool "${label}" has a readOnly that is not a boolean`);
    if (
      tool.callers !== undefined &&
      (!Array.isArray(tool.callers) ||
        tool.callers.length === 0 ||
        tool.callers.some((caller) => caller !== "code" && caller !== "model"))
    )
      problems.push(`tool "${label}" has callers ${JSON.stringify(tool.callers)}: a list of "code" and/or "model"`);
    if (tool.revert !== undefined && typeof tool.revert !== "function")
      problems.push(`tool "${label}" has a revert that is not a function`);
  }
  return problems;
}
