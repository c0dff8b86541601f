// @codemode/cli/inbox: the approval inbox, as a request handler to mount or a server of its own.

export type { DecisionAnswer } from "./decide.js";
export { type ApprovalInbox, createApprovalInbox } from "./handler.js";
export type { ApprovalInboxOptions, InboxEventName, InboxQueue, InboxRuntime } from "./inbox-options.js";
export { type RunningApprovalInbox, type StartApprovalInboxOptions, startApprovalInbox } from "./server.js";
