import type { JsonSchema } from "../connectors/define-connector.js";

// JSON Schemas of the Code Mode MCP server's tools. Clients check `structuredContent` against the
// output schemas (the SDK's Client does), so each must admit every shape its tool returns.

/** An object schema: its properties, and those it requires. */
function object(properties: Record<string, JsonSchema>, required?: string[]): JsonSchema {
  return required ? { type: "object", properties, required } : { type: "object", properties };
}

const action: JsonSchema = object(
  {
    executionId: { type: "string" },
    seq: { type: "integer", description: "The call's sequence number: name it when approving or rejecting." },
    connector: { type: "string" },
    method: { type: "string" },
    args: { description: "The call's argument." },
  },
  ["seq", "connector", "method"],
);

/** What `execute`, `approve` and `reject` answer: a model-facing outcome, or a rejection. */
export const outcomeSchema: JsonSchema = object(
  {
    status: { type: "string", enum: ["completed", "paused", "error", "rejected"] },
    executionId: { type: "string" },
    result: { description: "The program's return value (completed)." },
    pending: { type: "array", items: action, description: "The action waiting for a person (paused)." },
    rejected: { ...action, description: "The action a person rejected; it did not run (rejected)." },
    reason: { type: "string" },
    message: { type: "string", description: "What to do next (paused, rejected)." },
    code: { type: "string", description: "The error code (error)." },
    error: { type: "string" },
    logs: { type: "array", items: { type: "string" } },
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

export const executeInputSchema: JsonSchema = object(
  {
    code: { type: "string", description: "An async arrow function, e.g. async () => { … return value; }" },
  },
  ["code"],
);

export const pendingInputSchema: JsonSchema = object({
  executionId: { type: "string", description: "Only this execution's pending action." },
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
    seq: { type: "integer", description: "The action you saw (see pending); refused when another one is pending now." },
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
