import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { CodemodeError, type ExecutionState, type PendingAction } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import { type DecisionAnswer, decide } from "./decide.js";
import { readDecisionForm } from "./decide-form.js";
import type { SafeHtml } from "./html.js";
import type { ApprovalInboxOptions } from "./inbox-options.js";
import { LiveUpdates } from "./live.js";
import {
  executionMain,
  type InboxListing,
  inboxMain,
  layout,
  messageMain,
  type Notice,
  type PageContext,
} from "./pages.js";
import { FormError, readForm } from "./request-body.js";
import { type Access, BASE_HEADERS, InboxGuard, pageHeaders } from "./security.js";

/** The inbox as a request handler, and what stops its live updates. */
export interface ApprovalInbox {
  /** A Node.js request listener: `http.createServer(inbox.handler)`, or mounted under `basePath`. */
  handler: (request: IncomingMessage, response: ServerResponse) => void;
  /** Ends open event streams and stops polling. */
  close(): Promise<void>;
}

type Route =
  | { kind: "index" }
  | { kind: "execution"; executionId: string }
  | { kind: "decide"; executionId: string }
  | { kind: "events" }
  | { kind: "none" };

/**
 * An approval inbox as a request handler an application mounts: paused runs with every pending
 * action, its tool's description, arguments, the log so far and age; per action Approve, Deny
 * (with a reason) or Edit (the arguments, checked against the tool's schema), an optional grant,
 * and Approve all of a run (R-AP-8, R-AP-9); each run's audit trail; live updates. Every request needs the token; decisions need a same-origin POST carrying the
 * form's anti-forgery value.
 *
 * @example
 * const inbox = createApprovalInbox({ runtime, token: process.env.INBOX_TOKEN!, basePath: "/inbox" });
 * http.createServer((request, response) => request.url?.startsWith("/inbox") ? inbox.handler(request, response) : app(request, response));
 */
export function createApprovalInbox(options: ApprovalInboxOptions): ApprovalInbox {
  if (typeof options.token !== "string" || options.token.length < 16)
    throw new TypeError("createApprovalInbox needs a token of at least 16 characters");
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  if (base && !base.startsWith("/")) throw new TypeError('basePath must start with "/" (e.g. "/inbox")');
  const guard = new InboxGuard(options.token, base || "/", options.allowedOrigins ?? []);
  const live = new LiveUpdates(options.runtime, options.pollMs ?? (options.queue ? 15_000 : 2_000), options.queue);
  const settings = { options, base, guard, live };
  return {
    handler: (request, response) => {
      handle(settings, request, response).catch((error: unknown) => {
        if (!response.headersSent)
          response.writeHead(500, { ...BASE_HEADERS, "content-type": "text/plain; charset=utf-8" });
        response.end(`the inbox failed: ${errorMessage(error)}\n`);
      });
    },
    close: () => live.close(),
  };
}

interface Settings {
  options: ApprovalInboxOptions;
  base: string;
  guard: InboxGuard;
  live: LiveUpdates;
}

async function handle(settings: Settings, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { guard, base } = settings;
  const url = new URL(request.url ?? "/", "http://inbox.invalid");
  const path = base && url.pathname.startsWith(base) ? url.pathname.slice(base.length) || "/" : url.pathname;
  // The link's token becomes a session, and leaves the address bar (and history, and referrers).
  const linkToken = url.searchParams.get("token");
  if (request.method === "GET" && linkToken !== null) {
    if (!guard.matches(linkToken))
      return refuse(response, 401, "This link's token is not this inbox's. Open the address `codemode inbox` printed.");
    url.searchParams.delete("token");
    response.writeHead(303, {
      ...BASE_HEADERS,
      location: `${base}${path}${url.search}`,
      "set-cookie": guard.cookie(guard.startSession()),
      "referrer-policy": "no-referrer",
    });
    return void response.end();
  }
  const access = guard.access(request);
  if (!access)
    return refuse(
      response,
      401,
      "This inbox needs its token: open the address `codemode inbox` printed (it ends in ?token=…).",
    );
  const route = routeOf(path);
  if (route.kind === "none") return refuse(response, 404, "No such page in the inbox.");
  const method = request.method ?? "GET";
  if (route.kind === "decide") {
    if (method !== "POST") return refuse(response, 405, "Decisions are made with POST only.", { allow: "POST" });
    return decideRoute(settings, access, request, response, route.executionId);
  }
  if (method !== "GET" && method !== "HEAD") return refuse(response, 405, "Only GET here.", { allow: "GET" });
  if (route.kind === "events") return settings.live.attach(request, response);
  const fragment = url.searchParams.get("fragment") === "1";
  const tone = url.searchParams.get("tone");
  const notice: Notice | undefined = url.searchParams.get("notice")
    ? { message: url.searchParams.get("notice") ?? "", tone: tone === "ok" || tone === "warn" ? tone : "error" }
    : undefined;
  const page = pageContext(settings, access);
  if (route.kind === "index") return indexRoute(settings, page, response, fragment, notice);
  return executionRoute(settings, page, response, route.executionId, fragment, notice);
}

function routeOf(path: string): Route {
  if (path === "/" || path === "") return { kind: "index" };
  if (path === "/events") return { kind: "events" };
  const match = /^\/executions\/([^/]+)(\/decide)?\/?$/.exec(path);
  if (!match?.[1]) return { kind: "none" };
  let executionId: string;
  try {
    executionId = decodeURIComponent(match[1]);
  } catch {
    return { kind: "none" };
  }
  return match[2] ? { kind: "decide", executionId } : { kind: "execution", executionId };
}

function pageContext(settings: Settings, access: Access): PageContext {
  const { options, base, guard } = settings;
  return {
    base,
    title: options.title ?? "Code Mode approvals",
    operator: options.operator ?? "inbox",
    formToken: guard.formToken(access),
    nonce: randomBytes(16).toString("base64"),
  };
}

async function indexRoute(
  settings: Settings,
  page: PageContext,
  response: ServerResponse,
  fragment: boolean,
  notice: Notice | undefined,
): Promise<void> {
  let listing: InboxListing = { pending: [], recent: [], more: false };
  let trouble: string | undefined;
  try {
    listing = await readListing(settings);
  } catch (error) {
    trouble = `The store is unreachable (${errorMessage(error)}). This page retries by itself.`;
  }
  send(response, trouble ? 503 : 200, page, "Inbox", inboxMain(page, listing, trouble), fragment, notice);
}

async function readListing(settings: Settings): Promise<InboxListing> {
  const { runtime } = settings.options;
  const [pending, recent] = await Promise.all([runtime.pending({ limit: 50 }), runtime.executions({ limit: 20 })]);
  // One read per run, however many of its actions wait (R-AP-8).
  const ids = [...new Set(pending.items.map((action) => action.executionId))];
  const executions = new Map(await Promise.all(ids.map(async (id) => [id, await runtime.execution(id)] as const)));
  return {
    pending: pending.items.map((action) => ({ action, execution: executions.get(action.executionId) ?? null })),
    recent: recent.items,
    more: pending.cursor !== undefined,
  };
}

async function executionRoute(
  settings: Settings,
  page: PageContext,
  response: ServerResponse,
  executionId: string,
  fragment: boolean,
  notice: Notice | undefined,
): Promise<void> {
  let execution: ExecutionState | null;
  let pending: PendingAction[] = [];
  try {
    const { runtime } = settings.options;
    execution = await runtime.execution(executionId);
    if (execution?.status === "paused") pending = (await runtime.pending(executionId)).items;
  } catch (error) {
    const message = CodemodeError.isInstance(error) ? error.message : String(error);
    return send(
      response,
      503,
      page,
      "Store unreachable",
      messageMain(page, "Store unreachable", `${message}. Reload to try again.`),
      fragment,
      notice,
    );
  }
  if (!execution)
    return send(
      response,
      404,
      page,
      "Not found",
      messageMain(
        page,
        "No such execution",
        `No execution ${executionId} in the store: it may have been pruned or deleted.`,
      ),
      fragment,
      notice,
    );
  send(
    response,
    200,
    page,
    `Execution ${executionId.slice(0, 8)}`,
    executionMain(page, execution, pending),
    fragment,
    notice,
  );
}

async function decideRoute(
  settings: Settings,
  access: Access,
  request: IncomingMessage,
  response: ServerResponse,
  executionId: string,
): Promise<void> {
  const { guard, options, live, base } = settings;
  const origin = guard.sameOrigin(request);
  if (!origin.ok)
    return refuse(response, 403, `Refused: ${origin.reason}. Decisions can only be made from the inbox's own pages.`);
  let form: Record<string, string>;
  try {
    form = await readForm(request);
  } catch (error) {
    return refuse(response, error instanceof FormError ? error.status : 400, errorMessage(error));
  }
  // A browser's session proves itself with the form's value; a bearer of the token needs none (no browser sends that header by itself).
  if (
    access.kind === "session" &&
    !guard.formTokenMatches(access, form.csrf ?? request.headers["x-inbox-csrf"]?.toString())
  )
    return refuse(
      response,
      403,
      "Refused: the form's anti-forgery value is missing or wrong. Reload the inbox and try again.",
    );
  const decision = readDecisionForm(form, executionId, options.operator ?? "inbox");
  const wantsJson = (request.headers.accept ?? "").includes("application/json");
  if ("problem" in decision) {
    if (!wantsJson) return refuse(response, 400, decision.problem);
    return json(response, 400, {
      ok: false,
      tone: "error",
      code: "BAD_REQUEST",
      message: `Refused: ${decision.problem}`,
    });
  }
  const answer = await decide(options.runtime, options.queue, decision);
  live.changed();
  if (wantsJson) return json(response, answer.ok ? 200 : statusOf(answer), answer);
  // Without the page's script: back to where the person was, with the notice.
  const back = new URLSearchParams({ notice: answer.message, tone: answer.tone });
  response.writeHead(303, { ...BASE_HEADERS, location: `${base}/?${back}` });
  response.end();
}

function statusOf(answer: DecisionAnswer): number {
  if (answer.code === "NOT_FOUND") return 404;
  if (answer.code === "STORAGE_ERROR") return 503;
  if (answer.code === "INVALID_DECISION") return 422;
  return 409;
}

function send(
  response: ServerResponse,
  status: number,
  page: PageContext,
  heading: string,
  main: SafeHtml,
  fragment: boolean,
  notice: Notice | undefined,
): void {
  if (fragment) {
    // A fragment holds the forms and their anti-forgery value: it forbids framing as a page does.
    response.writeHead(status, { ...BASE_HEADERS, "content-type": "text/html; charset=utf-8" });
    return void response.end(main.value);
  }
  response.writeHead(status, pageHeaders(page.nonce));
  response.end(layout(page, heading, main, notice));
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { ...BASE_HEADERS, "content-type": "application/json; charset=utf-8" });
  response.end(JSON.stringify(body));
}

function refuse(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...BASE_HEADERS, "content-type": "text/plain; charset=utf-8", ...headers });
  response.end(`${message}\n`);
}
