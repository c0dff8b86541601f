import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Connector } from "../../connectors/define-connector.js";
import { isPauseIdOf } from "../../log/pause-id.js";
import type { PendingAction } from "../../outcome.js";

/** What a chat's decision claims: the pause it answers, and the tool call that showed it. */
export interface ChatClaim {
  executionId: string;
  /** The first action the request shows (for a request of one action, that action). */
  seq: number;
  /**
   * Every action the request shows, ascending, when it shows more than one (R-AP-8). The
   * signature covers exactly this set, so an answer decides these actions and no others.
   */
  seqs?: readonly number[] | undefined;
  /**
   * The pauses those actions wait in (`PendingAction.pauseId`), in the same order, when the
   * request named them: signed with the rest, so an answer decides those pauses and no later one.
   */
  pauses?: readonly string[] | undefined;
  toolCallId: string;
}

/** The actions a claim stands for: its `seqs`, or its one `seq`. */
export function claimedSeqs(claim: Pick<ChatClaim, "seq" | "seqs">): readonly number[] {
  return claim.seqs && claim.seqs.length > 0 ? claim.seqs : [claim.seq];
}

/** Whether a claim's set reads one way only: whole numbers, ascending, starting at `seq`; a pause id per seq. */
function wellFormed(claim: ChatClaim): boolean {
  const seqs = claimedSeqs(claim);
  const pauses = claim.pauses;
  return (
    seqs[0] === claim.seq &&
    seqs.every((seq, index) => Number.isSafeInteger(seq) && seq >= 0 && (index === 0 || seq > seqs[index - 1]!)) &&
    (pauses === undefined ||
      (Array.isArray(pauses) &&
        pauses.length === seqs.length &&
        pauses.every((pause, index) => isPauseIdOf(seqs[index]!, pause))))
  );
}

/** Who may decide, besides the application's own code (R-AP-11): the runtime's part of it. */
export interface ApprovalAuthority {
  /** The signature the server puts on an approval request it issues to a chat. */
  sign(claim: ChatClaim, code: string): string;
  /** Whether `signature` is this server's, over exactly this claim and code. */
  verify(claim: ChatClaim, code: string, signature: string): boolean;
  /** Whether a chat may decide this action (the runtime's `chatApprovals` and the tool's `approvers`). */
  chatMayDecide(action: Pick<PendingAction, "executionId" | "seq" | "connector" | "method" | "args">): boolean;
  /**
   * Said by an adapter when it first offers a chat approvals: without an `approvalSecret` the key
   * lives as long as this runtime, so an answer another process receives (a restart, a second
   * replica, a serverless handler) is refused. Warned once per runtime; nothing with a secret.
   */
  offeredToChat(): void;
  /** A chat's approval the server refused: to the runtime's logger, so an operator sees it. */
  refused(message: string): void;
}

const authorities = new WeakMap<object, ApprovalAuthority>();

/** The runtime's authority, for the adapters; undefined for an object `createCodemodeRuntime` did not make. */
export function approvalAuthorityOf(runtime: object): ApprovalAuthority | undefined {
  return authorities.get(runtime);
}

export function registerApprovalAuthority(runtime: object, authority: ApprovalAuthority): void {
  authorities.set(runtime, authority);
}

/**
 * The authority of one runtime: an HMAC-SHA256 key (the `approvalSecret`, or random bytes that
 * live as long as the runtime) over execution id, the seqs shown, tool call id and a hash of the
 * code, and the choice of who may approve. The seqs are signed as `2,3`; a request of one action
 * signs `2`, as requests did before batched pauses, so their signatures still verify.
 */
export function createApprovalAuthority(
  secret: string | Uint8Array | undefined,
  chatApprovals: boolean | ((action: PendingAction) => boolean) | undefined,
  connectors: ReadonlyMap<string, Connector>,
  warn: (message: string) => void = () => {},
): ApprovalAuthority {
  let warned = false;
  const key =
    secret === undefined
      ? randomBytes(32)
      : typeof secret === "string"
        ? Buffer.from(secret, "utf8")
        : Buffer.from(secret);
  // A claim with pauses signs them after the rest; one without signs as requests did before pause ids.
  const mac = (claim: ChatClaim, code: string) =>
    createHmac("sha256", key)
      .update(
        `codemode-approval\n${claim.executionId}\n${claimedSeqs(claim).join(",")}\n${claim.toolCallId}\n${createHash("sha256").update(code).digest("hex")}${claim.pauses ? `\npauses ${claim.pauses.join(",")}` : ""}`,
      )
      .digest();
  return {
    sign: (claim, code) => mac(claim, code).toString("base64url"),
    verify(claim, code, signature) {
      if (typeof signature !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(signature) || !wellFormed(claim)) return false;
      return timingSafeEqual(mac(claim, code), Buffer.from(signature, "base64url"));
    },
    offeredToChat() {
      if (secret !== undefined || warned || chatApprovals === false) return;
      warned = true;
      warn(
        "chat approvals are signed with a key that lives only as long as this runtime (no approvalSecret): an approval another process receives (after a restart, on a second replica, in a serverless handler) is refused. Give every process that serves the chat the same approvalSecret (32 bytes or more, e.g. from `openssl rand -hex 32`).",
      );
    },
    refused(message) {
      warn(`a chat's approval was refused: ${message}`);
    },
    chatMayDecide(action) {
      // A tool reserved to operators stays reserved, whatever the runtime-wide choice says.
      if (connectors.get(action.connector)?.tools[action.method]?.approvers === "operator") return false;
      if (typeof chatApprovals === "function") {
        try {
          return (
            chatApprovals({
              executionId: action.executionId,
              seq: action.seq,
              connector: action.connector,
              method: action.method,
              args: action.args,
            }) === true
          );
        } catch {
          // A rule that fails grants nothing.
          return false;
        }
      }
      return chatApprovals ?? true;
    },
  };
}

/** Problems with the options, for `checkOptions`. */
export function approvalOptionProblems(secret: unknown, chatApprovals: unknown): string[] {
  const problems: string[] = [];
  if (secret !== undefined) {
    const bytes =
      typeof secret === "string" ? Buffer.byteLength(secret) : secret instanceof Uint8Array ? secret.byteLength : -1;
    if (bytes < 0) problems.push("approvalSecret must be a string or a Uint8Array");
    else if (bytes < 32)
      problems.push("approvalSecret must be at least 32 bytes (e.g. 64 hex characters from `openssl rand -hex 32`)");
  }
  if (chatApprovals !== undefined && typeof chatApprovals !== "boolean" && typeof chatApprovals !== "function")
    problems.push("chatApprovals must be true, false or a function of the pending action");
  return problems;
}
