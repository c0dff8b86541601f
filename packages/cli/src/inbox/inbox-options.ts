import type { CodemodeRuntime, ErrorOutcome } from "@codemode/core";
import type { ApproveInput } from "@codemode/core/operations";

/** What the inbox needs of a runtime: listings and reads, and decide/reject (approvals go to the queue when there is one). */
export type InboxRuntime = Pick<CodemodeRuntime, "pending" | "executions" | "execution" | "decide" | "reject">;

/** Lifecycle events the inbox listens to (a `@codemode/bullmq` queue publishes these). */
export type InboxEventName = "paused" | "completed" | "error" | "rejected" | "stalled" | "failed";

/**
 * A fleet queue, as `createCodemodeQueue` of `@codemode/bullmq` returns it (the inbox depends on
 * its shape, not on the package). Given one, the inbox queues approvals for the workers and
 * refreshes pages the moment a worker reports a change.
 */
export interface InboxQueue {
  approve(input: ApproveInput): Promise<{ executionId: string; seq: number } | ErrorOutcome>;
  reject(input: { executionId: string; seq: number; by?: string; reason?: string }): Promise<boolean>;
  readonly events: {
    on(type: InboxEventName, listener: (event: { executionId: string }) => void): unknown;
    off(type: InboxEventName, listener: (event: { executionId: string }) => void): unknown;
  };
  close?(): Promise<void>;
}

export interface ApprovalInboxOptions {
  runtime: InboxRuntime;
  /**
   * The secret every request must carry (once as `?token=` in the link, which sets a same-site
   * cookie, or as `Authorization: Bearer`). Long and random: `randomBytes(24).toString("base64url")`.
   */
  token: string;
  /** A fleet queue: approvals go to its workers, and its lifecycle events drive live updates. */
  queue?: InboxQueue;
  /** Where the application mounts the handler, e.g. "/inbox". Default "" (the root). */
  basePath?: string;
  /**
   * How often the listing is read for changes while a page is open. Default 2 000 ms, or
   * 15 000 ms with a queue (its events come at once; the poll catches changes made elsewhere).
   */
  pollMs?: number;
  /** The name decisions are recorded under when the person does not type one. Default "inbox". */
  operator?: string;
  /**
   * Origins, besides the inbox's own, from which decisions may be posted (a reverse proxy's
   * public origin, e.g. "https://ops.example.com"). Default none.
   */
  allowedOrigins?: readonly string[];
  /** The page title. Default "Code Mode approvals". */
  title?: string;
}
