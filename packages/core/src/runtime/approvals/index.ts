// Who may decide a pause (the approval authority: signatures, chat claims) and the application's approval policy.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export {
  approvalAuthorityOf,
  approvalOptionProblems,
  type ChatClaim,
  claimedSeqs,
  createApprovalAuthority,
  registerApprovalAuthority,
} from "./authority.js";
export { APPROVAL_POLICY_TIMEOUT_MS, type ApprovalPolicy, consultPolicy } from "./policy.js";
