/**
 * The tasks API's routes behind its bearer token: tasks (list with cursors, create with an
 * Idempotency-Key, read, HEAD, patch, delete), their comments, users (paged), stats, search, and the
 * misbehaving ones the tests need (a mislabelled answer, a 500, a slow and a huge report).
 */
import type { ServerResponse } from "node:http";
import {
  badRequest,
  decodeCursor,
  encodeCursor,
  HttpError,
  integerParam,
  notFound,
  objectBody,
  type RecordedRequest,
  sendJson,
} from "./tasks-api-http.ts";
import {
  type Comment,
  checkAssignee,
  findTask,
  PRIORITIES,
  type Priority,
  STATUSES,
  type State,
  type Status,
  type Task,
} from "./tasks-api-state.ts";

const DEFAULT_SLOW_MS = 5000;
const DEFAULT_HUGE_BYTES = 20_000_000;

/** What a route reads: the recorded request, its path's decoded segments, the state now. */
export interface RouteRequest {
  recorded: RecordedRequest;
  segments: string[];
  state: State;
  /** Timers of slow answers in flight (the API clears them when it closes). */
  timers: Set<NodeJS.Timeout>;
}

type Handler = (request: RouteRequest, res: ServerResponse) => void | Promise<void>;

/** Each route's pattern (`:name` matches one segment) and its handler per allowed method. */
const ROUTES: Array<[pattern: string, handlers: Record<string, Handler>]> = [
  ["/tasks", { GET: listTasks, POST: createTask }],
  ["/tasks/:taskId", { GET: getTask, HEAD: headTask, PATCH: patchTask, DELETE: deleteTask }],
  ["/tasks/:taskId/comments", { GET: listComments, POST: addComment }],
  ["/tasks/:taskId/mislabelled", { GET: (_request, res) => sendJson(res, 200, { id: "not-a-number" }) }],
  ["/users", { GET: listUsers }],
  ["/users/:userId", { GET: getUser }],
  ["/stats", { GET: stats }],
  [
    "/reports/broken",
    { GET: (_request, res) => sendJson(res, 500, { code: "internal", message: "the report generator crashed" }) },
  ],
  ["/reports/slow", { GET: slowReport }],
  ["/reports/huge", { GET: hugeReport }],
  ["/search", { GET: search }],
];

/** Answers a request that passed the token check: 404 with no route, 405 with a method it does not allow. */
export async function routeRequest(request: RouteRequest, res: ServerResponse): Promise<void> {
  const { method, path } = request.recorded;
  const { segments } = request;
  const matches = (pattern: string) => {
    const parts = pattern.split("/").filter(Boolean);
    if (parts.length !== segments.length) return false;
    return parts.every((part, i) => part.startsWith(":") || part === segments[i]);
  };
  const route = ROUTES.find(([pattern]) => matches(pattern));
  if (!route) throw notFound(`no route for ${method} ${path}`);
  const handler = route[1][method];
  if (!handler) throw new HttpError(405, "method_not_allowed", `${method} is not allowed on ${path}`);
  await handler(request, res);
}

function listTasks({ recorded: { query }, state }: RouteRequest, res: ServerResponse): void {
  const status = query.status;
  if (status !== undefined && !STATUSES.includes(status)) throw badRequest("status must be open or done");
  const limit = integerParam(query, "limit", 10, 1, 50);
  const after = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
  const matching = state.tasks.filter((t) => (status === undefined || t.status === status) && t.id > after);
  const items = matching.slice(0, limit);
  const last = items.at(-1);
  sendJson(res, 200, matching.length > limit && last ? { items, nextCursor: encodeCursor(last.id) } : { items });
}

function createTask({ recorded, state }: RouteRequest, res: ServerResponse): void {
  const body = objectBody(recorded.body);
  const key = recorded.headers["idempotency-key"];
  if (key !== undefined) {
    const earlier = state.tasks.find((t) => t.id === state.idempotency.get(key));
    if (earlier) {
      sendJson(res, 201, earlier, { location: `/tasks/${earlier.id}`, "idempotent-replayed": "true" });
      return;
    }
  }
  if (typeof body.title !== "string" || body.title === "") throw badRequest("title is required");
  const priority = body.priority ?? "normal";
  if (typeof priority !== "string" || !PRIORITIES.includes(priority)) {
    throw badRequest("priority must be low, normal or high");
  }
  const task: Task = {
    id: state.nextTaskId++,
    title: body.title,
    status: "open",
    priority: priority as Priority,
    assignee: body.assignee === undefined ? null : checkAssignee(state, body.assignee),
    createdAt: new Date().toISOString(),
    subtasks: [],
  };
  state.tasks.push(task);
  if (key !== undefined) state.idempotency.set(key, task.id);
  sendJson(res, 201, task, { location: `/tasks/${task.id}` });
}

function headTask({ segments, state }: RouteRequest, res: ServerResponse): void {
  const rawId = segments[1]!;
  const exists = /^\d+$/.test(rawId) && state.tasks.some((t) => t.id === Number(rawId));
  res.writeHead(exists ? 200 : 404);
  res.end();
}

function getTask({ segments, state }: RouteRequest, res: ServerResponse): void {
  sendJson(res, 200, findTask(state, segments[1]!));
}

function deleteTask({ segments, state }: RouteRequest, res: ServerResponse): void {
  const task = findTask(state, segments[1]!);
  state.tasks = state.tasks.filter((t) => t !== task);
  state.comments = state.comments.filter((c) => c.taskId !== task.id);
  res.writeHead(204);
  res.end();
}

function patchTask({ recorded, segments, state }: RouteRequest, res: ServerResponse): void {
  const task = findTask(state, segments[1]!);
  const patch = objectBody(recorded.body);
  const updated: Task = { ...task };
  if (Object.keys(patch).length === 0) throw badRequest("the patch changes nothing");
  for (const [name, value] of Object.entries(patch)) {
    if (name === "title") {
      if (typeof value !== "string" || value === "") throw badRequest("title must be a non-empty string");
      updated.title = value;
    } else if (name === "status") {
      if (typeof value !== "string" || !STATUSES.includes(value)) throw badRequest("status must be open or done");
      updated.status = value as Status;
    } else if (name === "priority") {
      if (typeof value !== "string" || !PRIORITIES.includes(value)) {
        throw badRequest("priority must be low, normal or high");
      }
      updated.priority = value as Priority;
    } else if (name === "assignee") {
      updated.assignee = checkAssignee(state, value);
    } else {
      throw badRequest(`unknown field ${name}`);
    }
  }
  Object.assign(task, updated);
  sendJson(res, 200, task);
}

function listComments({ segments, state }: RouteRequest, res: ServerResponse): void {
  const task = findTask(state, segments[1]!);
  sendJson(
    res,
    200,
    state.comments.filter((c) => c.taskId === task.id),
  );
}

function addComment({ recorded, segments, state }: RouteRequest, res: ServerResponse): void {
  const task = findTask(state, segments[1]!);
  const body = objectBody(recorded.body);
  if (typeof body.text !== "string" || body.text === "") throw badRequest("text is required");
  const comment: Comment = {
    id: state.nextCommentId++,
    taskId: task.id,
    text: body.text,
    createdAt: new Date().toISOString(),
  };
  state.comments.push(comment);
  sendJson(res, 201, comment);
}

function listUsers({ recorded: { query }, state }: RouteRequest, res: ServerResponse): void {
  const page = integerParam(query, "page", 1, 1);
  const perPage = integerParam(query, "per_page", 20, 1, 100);
  const users = state.users.slice((page - 1) * perPage, page * perPage);
  sendJson(res, 200, { users, page, total: state.users.length });
}

function getUser({ segments, state }: RouteRequest, res: ServerResponse): void {
  const user = state.users.find((u) => u.id === segments[1]);
  if (!user) throw notFound(`no user ${segments[1]}`);
  sendJson(res, 200, user);
}

function stats({ state }: RouteRequest, res: ServerResponse): void {
  sendJson(res, 200, {
    open: state.tasks.filter((t) => t.status === "open").length,
    done: state.tasks.filter((t) => t.status === "done").length,
  });
}

/** Answers after `ms` (5 s by default), unless the client goes first. */
async function slowReport({ recorded: { query }, timers }: RouteRequest, res: ServerResponse): Promise<void> {
  const ms = integerParam(query, "ms", DEFAULT_SLOW_MS, 0);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
    res.once("close", () => {
      clearTimeout(timer);
      timers.delete(timer);
      resolve();
    });
  });
  if (!res.destroyed && !res.writableEnded) sendJson(res, 200, { ok: true, waitedMs: ms });
}

/** A JSON body of `bytes` bytes (20 MB by default), streamed; with a content-length when asked. */
async function hugeReport({ recorded: { query } }: RouteRequest, res: ServerResponse): Promise<void> {
  const bytes = integerParam(query, "bytes", DEFAULT_HUGE_BYTES, 11);
  const head = '{"data":"';
  const tail = '"}';
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (query.contentLength === "true") headers["content-length"] = String(bytes);
  res.writeHead(200, headers);
  res.write(head);
  const chunk = Buffer.alloc(64 * 1024, "x");
  let left = bytes - head.length - tail.length;
  while (left > 0 && !res.destroyed) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= piece.length;
    if (!res.write(piece)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
  }
  if (!res.destroyed) res.end(tail);
}

function search({ recorded: { query }, state }: RouteRequest, res: ServerResponse): void {
  const q = query.q;
  if (q === undefined || q === "") throw badRequest("q is required");
  const needle = q.toLowerCase();
  sendJson(res, 200, { results: state.tasks.filter((t) => t.title.toLowerCase().includes(needle)) });
}
