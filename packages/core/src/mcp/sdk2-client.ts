// A `Client` of the MCP TypeScript SDK 2 (`@modelcontextprotocol/client`), as the connector sees it:
// described by its shape, not imported, so @codemode/core/mcp loads with either SDK installed.

/** A Standard Schema (v1), the result schema SDK 2's `request()` takes for methods it does not know. */
export interface ResultSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | { readonly value: unknown; readonly issues?: undefined }
      | { readonly issues: ReadonlyArray<{ message: string }> };
  };
}

/** The request options of SDK 2 the connector passes. */
export interface Sdk2RequestOptions {
  timeout?: number;
  signal?: AbortSignal;
}

/**
 * The parts of an SDK 2 `Client` (`@modelcontextprotocol/client` 2.x) the connector uses. It is
 * told apart from an SDK 1 client by `getProtocolEra`, which only SDK 2 has.
 */
export interface McpClientSdk2 {
  listTools(
    params?: { cursor?: string },
    options?: Sdk2RequestOptions,
  ): Promise<{ tools: unknown[]; nextCursor?: string }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    options?: Sdk2RequestOptions & { toolDefinition?: object },
  ): Promise<unknown>;
  /** A method of the protocol: SDK 2 checks the result against the negotiated protocol's schema. */
  request(
    request: { method: "tools/list"; params?: { cursor?: string } },
    options?: Sdk2RequestOptions,
  ): Promise<unknown>;
  /** Any other method, with the schema its result is checked against. */
  request(
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: ResultSchema,
    options?: Sdk2RequestOptions,
  ): Promise<unknown>;
  setNotificationHandler(
    method: "notifications/tools/list_changed",
    handler: (notification: { method: "notifications/tools/list_changed" }) => void | Promise<void>,
  ): void;
  getInstructions(): string | undefined;
  getServerCapabilities(): object | undefined;
  /** "modern": a 2026-07-28 connection; "legacy": 2025-11-25 and before. */
  getProtocolEra(): "modern" | "legacy" | undefined;
}

/** Whether `client` is an SDK 2 client: duck-typed, as classes differ between package copies and SDK generations. */
export function isSdk2Client(client: unknown): client is McpClientSdk2 {
  const candidate = client as Partial<McpClientSdk2> | null;
  return typeof candidate?.getProtocolEra === "function" && typeof candidate.request === "function";
}

/** A result schema that takes any JSON object as it is; the connector checks the fields it reads. */
export const anyObject: ResultSchema = {
  "~standard": {
    version: 1,
    vendor: "codemode",
    validate: (value) =>
      typeof value === "object" && value !== null && !Array.isArray(value)
        ? { value }
        : { issues: [{ message: "expected a JSON object" }] },
  },
};

/** `timeout` and `signal`, left out when not given (SDK 2 reads a present `undefined` as given). */
export function requestOptions(timeoutMs: number | undefined, signal?: AbortSignal): Sdk2RequestOptions {
  return { ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }), ...(signal ? { signal } : {}) };
}

/** `value` as a plain object, or undefined when it is not one. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
