import type { CodemodeRuntime, Outcome } from "@codemode/core";
import {
  directCallCode,
  executionIdOfModelOutput,
  type PauseReference,
  readPauseReference,
} from "@codemode/core/adapters";
import type { ModelMessage } from "ai";

/** A Code Mode pause carried by an AI SDK approval request, with the answer when there is one. */
export interface PauseApproval extends PauseReference {
  approvalId: string;
  toolCallId: string;
  approved?: boolean;
  reason?: string;
}

/** The Code Mode approval request for `toolCallId` in a conversation, with its response. */
export function findPauseApproval(messages: ModelMessage[], toolCallId: string): PauseApproval | undefined {
  const request = approvalRequests(messages).find((candidate) => candidate.toolCallId === toolCallId);
  return request ? withResponse(messages, request) : undefined;
}

/** Every Code Mode approval request in a conversation (those whose reason carries the marker), with its response. */
export function pauseApprovals(messages: ModelMessage[]): PauseApproval[] {
  return approvalRequests(messages).map((request) => withResponse(messages, request));
}

function withResponse(messages: ModelMessage[], request: PauseApproval): PauseApproval {
  for (const message of messages) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-response" && part.approvalId === request.approvalId) {
        return { ...request, approved: part.approved, ...(part.reason ? { reason: part.reason } : {}) };
      }
    }
  }
  return request;
}

function approvalRequests(messages: ModelMessage[]): PauseApproval[] {
  const requests: PauseApproval[] = [];
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type !== "tool-approval-request") continue;
      const reference = readPauseReference(part.reason);
      if (reference) requests.push({ ...reference, approvalId: part.approvalId, toolCallId: part.toolCallId });
    }
  }
  return requests;
}

/** The program of the tool call `toolCallId`: its `code` input, or a model tool's direct call (given `runtime`). */
export function toolCallCode(
  messages: ModelMessage[],
  toolCallId: string,
  runtime?: Pick<CodemodeRuntime, "modelTools">,
): unknown {
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    const call = message.content.find((part) => part.type === "tool-call" && part.toolCallId === toolCallId);
    if (call?.type !== "tool-call") continue;
    return callCode(call.toolName, call.input, runtime);
  }
  return undefined;
}

/**
 * The program a tool call runs: the Code Mode tool's `code`, or, for a model tool's call (named as
 * `createModelTools` names it; given `runtime`), the program of its direct call.
 */
export function callCode(
  toolName: string,
  input: unknown,
  runtime: Pick<CodemodeRuntime, "modelTools"> | undefined,
): unknown {
  const code = (input as { code?: unknown } | undefined)?.code;
  if (typeof code === "string" || typeof runtime?.modelTools !== "function") return code;
  const direct = runtime.modelTools().find((tool) => tool.name === toolName);
  return direct ? directCallCode(direct.tool, input) : undefined;
}

/**
 * The pause a Code Mode result reports and that may have moved on since: `paused` with every
 * pending seq it lists, or BUSY (seq -1, which no pause has: whatever the run does now is news).
 * Undefined for anything else, including outcomes that are final.
 */
export function openPause(output: unknown): PauseReference | undefined {
  const executionId = executionIdOfModelOutput(output);
  if (!executionId) return undefined;
  const { status, code, pending } = output as { status?: unknown; code?: unknown; pending?: Array<{ seq?: unknown }> };
  const seqs = Array.isArray(pending)
    ? pending.flatMap((action) => (typeof action?.seq === "number" ? [action.seq] : []))
    : [];
  if (status === "paused" && seqs.length > 0)
    return { executionId, seq: seqs[0]!, ...(seqs.length > 1 ? { seqs } : {}) };
  if (status === "error" && code === "BUSY") return { executionId, seq: -1 };
  return undefined;
}

/** The actions a reference names: its `seqs`, or its one `seq`. */
export function seqsOf(reference: Pick<PauseReference, "seq" | "seqs">): number[] {
  return reference.seqs && reference.seqs.length > 0 ? reference.seqs : [reference.seq];
}

/** Whether a paused outcome waits on other actions than the result that showed `reference` listed. */
export function pendingChanged(reference: PauseReference, outcome: Outcome): boolean {
  if (outcome.status !== "paused") return true;
  const now = outcome.pending.map((action) => action.seq).sort((a, b) => a - b);
  return now.join(",") !== [...seqsOf(reference)].sort((a, b) => a - b).join(",");
}
