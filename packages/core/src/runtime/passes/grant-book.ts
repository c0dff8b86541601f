import type { StoredEntry } from "../../log/interface.js";
import type { ApprovalDecision } from "../../outcome.js";

/**
 * The grants in force in one pass (R-AP-9), read from the log once: an approval on seq k with
 * `grant: { calls: n }` approves up to n further calls of its method, each recorded with
 * `viaGrant: k`, so what is left of a grant is what its entries have not used, in any pass.
 */
export class GrantBook {
  private grants: Array<{ seq: number; key: string; left: number; by?: string; reason?: string }> | undefined;

  constructor(private readonly log: ReadonlyMap<number, StoredEntry>) {}

  /**
   * A decision through a grant of this method with calls left (one is used), or undefined. Only a
   * call after the granting one counts as "further": an earlier call still pending waits for its
   * own decision, whatever was granted beside it.
   */
  take(connector: string, method: string, seq: number): ApprovalDecision | undefined {
    this.grants ??= this.read();
    if (this.grants.length === 0) return undefined;
    const key = `${connector}.${method}`;
    const grant = this.grants.find((candidate) => candidate.key === key && candidate.left > 0 && candidate.seq < seq);
    if (!grant) return undefined;
    grant.left -= 1;
    return {
      approved: true,
      decision: "approve",
      viaGrant: grant.seq,
      at: Date.now(),
      ...(grant.by ? { by: grant.by } : {}),
      ...(grant.reason ? { reason: grant.reason } : {}),
    };
  }

  private read(): Array<{ seq: number; key: string; left: number; by?: string; reason?: string }> {
    const used = new Map<number, number>();
    // Counted from what ran through a grant: a call asked again after it ran keeps its use spent.
    for (const entry of this.log.values()) {
      const via = entry.decision?.viaGrant ?? entry.grantSpent;
      if (Number.isSafeInteger(via)) used.set(via as number, (used.get(via as number) ?? 0) + 1);
    }
    const grants: Array<{ seq: number; key: string; left: number; by?: string; reason?: string }> = [];
    for (const entry of [...this.log.values()].sort((a, b) => a.seq - b.seq)) {
      const calls = entry.decision?.grant?.calls;
      if (entry.decision?.approved !== true || !Number.isSafeInteger(calls) || (calls as number) <= 0) continue;
      grants.push({
        seq: entry.seq,
        key: `${entry.connector}.${entry.method}`,
        left: (calls as number) - (used.get(entry.seq) ?? 0),
        ...(typeof entry.decision.by === "string" ? { by: entry.decision.by } : {}),
        ...(typeof entry.decision.reason === "string" ? { reason: entry.decision.reason } : {}),
      });
    }
    return grants;
  }
}
