import type { JsonSchema } from "../connectors/define-connector.js";
import { MAX_DECISIONS, MAX_GRANT_CALLS } from "../runtime/operations/index.js";

// JSON Schemas of the Code Mode MCP server's tools. Clients check `structuredContent` against the
// output schemas (the SDK's Client does), so each must admit every shape its tool returns.

/** An object schema: its properties, and those it requires. */
function object(properties: Record<string, JsonSchema>, required?: string[]): JsonSchema {
  return required ? { type: "object", properties, required } : { type: "object", properties };
}

const action: JsonSchema = object(
  {
    executionId: { type: "string" },
    seq: { type: "integer", description: "The call's sequence number: name it when deciding." },
    connector: { type: "string" },
    method: { type: "string" },
    args: { description: "The call's argument." },
    description: { type: "string", description: "The tool's description." },
    inputSchema: { type: "object", description: "The tool's input schema, for an edit's arguments." },
  },
  ["seq", "connector", "method"],
);

/** What `execute`, `approve`, `reject` and `decide` answer: a model-facing outcome, or a rejection. */
export const outcomeSchema: JsonSchema = object(
  {
    status: { type: "string", enum: ["completed", "paused", "error", "rejected"] },
    executionId: { type: "string" },
    result: { description: "The program's return value (completed)." },
    pending: {
      type: "array",
      items: action,
      description: "The actions waiting for a person (paused): a program may wait on several at once.",
    },
    rejected: { ...action, description: "The action a person rejected; it did not run (rejected)." },
    reason: { type: "string" },
    message: { type: "string", description: "What to do next (paused, rejected)." },
    code: { type: "string", description: "The error code (error)." },
    error: { type: "string" },
    logs: { type: "array", items: { type: "string" } },
    decided: {
      type: "array",
      items: object(
        {
          seq: { type: "integer" },
          call: { type: "string", description: "connector.method" },
          args: { description: "What it ran with (edited: the person's arguments), or was denied with." },
          decision: { type: "string", enum: ["approved", "edited", "granted", "denied"] },
          by: { type: "string" },
          reason: { type: "string" },
          outcome: { type: "string", enum: ["ran", "failed", "denied", "not run yet"] },
          result: { type: "string", description: "What it returned (JSON) or the error it failed with, cut short." },
        },
        ["seq", "call", "decision", "outcome"],
      ),
      description: "Every call of the run a person, the policy or a grant decided, and what came of it.",
    },
    moreDecided: { type: "integer", description: "Decided calls beyond those listed." },
  },
  ["status", "executionId"],
);

export const searchInputSchema: JsonSchema = object(
  { query: { type: "string", description: 'What you need, in words: "create an issue", "notes".' } },
  ["query"],
);

export const searchOutputSchema: JsonSchema = object(
  {
    query: { type: "string" },
    results: {
      type: "array",
      items: {
        type: "object",
        properties: {
          kind: { type: "string", enum: ["method", "snippet"] },
          path: { type: "string", description: "Pass it to describe; call a method as path(args)." },
          score: { type: "number" },
          requiresApproval: { type: "boolean" },
          description: { type: "string" },
        },
        required: ["kind", "path"],
      },
    },
    truncated: { type: "boolean" },
  },
  ["query", "results"],
);

export const describeInputSchema: JsonSchema = object(
  {
    target: { type: "string", description: 'A connector ("notes"), a method ("notes.add_note") or a snippet name.' },
  },
  ["target"],
);

export const describeOutputSchema: JsonSchema = object({
  kind: { type: "string", enum: ["connector", "method", "snippet"] },
  path: { type: "string" },
  description: { type: "string" },
  declaration: { type: "string", description: "TypeScript declarations of the connector or method." },
  methods: { type: "array", items: { type: "string" } },
  requiresApproval: { type: ["boolean", "string"] },
  source: { type: "string", description: "A snippet's code." },
  connectors: { type: "array", items: { type: "string" } },
  inputSchema: { description: "A snippet's input schema." },
  error: { type: "string", description: "Set when nothing has that name." },
});

/** Added to `execute`'s description when tasks are served: how a long or paused run is checked back on. */
export const EXECUTE_TASKS_NOTE =
  "\n\nLong runs: a run that pauses for a person's approval answers with its execution id. A client that supports MCP tasks runs execute as a task instead (task id = execution id) and gets the outcome with tasks/result once the run ends, even after a reconnect; do not re-issue the code.";

export const executeInputSchema: JsonSchema = object(
  {
    code: { type: "string", description: "An async arrow function, e.g. async () => { … return value; }" },
  },
  ["code"],
);

export const pendingInputSchema: JsonSchema = object({
  executionId: { type: "string", description: "Only this execution's pending actions." },
  cursor: { type: "string", description: "The cursor of the previous page." },
});

export const pendingOutputSchema: JsonSchema = object(
  {
    items: { type: "array", items: { ...action, required: ["executionId", "seq", "connector", "method"] } },
    cursor: { type: "string", description: "Pass it to get the next page; absent on the last." },
  },
  ["items"],
);

export const approveInputSchema: JsonSchema = object(
  {
    executionId: { type: "string" },
    seq: {
      type: "integer",
      description: "The action you saw (see pending); refused when it is not pending now. Others pending stay pending.",
    },
    reason: { type: "string" },
  },
  ["executionId", "seq"],
);

export const rejectInputSchema: JsonSchema = object(
  {
    executionId: { type: "string" },
    seq: { type: "integer" },
    reason: { type: "string", description: "Told to the model." },
  },
  ["executionId", "seq"],
);

const decision: JsonSchema = {
  type: "object",
  properties: {
    seq: { type: "integer", minimum: 0, description: "The pending action's number (see pending)." },
    decision: {
      type: "string",
      enum: ["approve", "deny", "edit"],
      description:
        "deny: the call does not run and rejects inside the program (ApprovalDenied); edit: it runs with args.",
    },
    args: { description: "For edit only: the arguments that run instead, checked by the tool's input schema." },
    reason: { type: "string", description: "Why; a denied call is told it." },
    grant: {
      type: "object",
      properties: { calls: { type: "integer", minimum: 1, maximum: MAX_GRANT_CALLS } },
      required: ["calls"],
      additionalProperties: false,
      description: "On approve or edit: approve this many further calls of the same method in this run.",
    },
  },
  required: ["seq", "decision"],
  additionalProperties: false,
};

export const decideInputSchema: JsonSchema = {
  type: "object",
  properties: {
    executionId: { type: "string" },
    decisions: {
      type: "array",
      items: decision,
      minItems: 1,
      maxItems: MAX_DECISIONS,
      description: "One decision per pending action you decide; the others stay pending.",
    },
    reason: { type: "string", description: "Why, for every decision that gives none." },
  },
  required: ["executionId", "decisions"],
  additionalProperties: false,
};
