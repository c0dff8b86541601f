// @codemode/cli/inbox: the approval inbox, as a request handler to mount or a server of its own.
export { createApprovalInbox, type ApprovalInbox } from "./handler.js";
export { startApprovalInbox, type RunningApprovalInbox, type StartApprovalInboxOptions } from "./server.js";
export type { ApprovalInboxOptions, InboxEventName, InboxQueue, InboxRuntime } from "./inbox-options.js";
export type { DecisionAnswer } from "./decide.js";
