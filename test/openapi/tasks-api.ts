/**
 * A real HTTP API for the openApiConnector tests: a small task tracker on 127.0.0.1, on
 * node:http only, with in-memory state. Its OpenAPI 3.1 document is tasks-api.openapi.yaml
 * beside this file (the source, with a {{SERVER_URL}} placeholder), served at GET /openapi.yaml
 * and, as JSON, at GET /openapi.json. Every request is recorded in `requests`.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse as parseYaml } from "yaml";

export interface RecordedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased names; a header sent more than once is joined with ", ". */
  headers: Record<string, string | undefined>;
  /** The parsed JSON body, the raw text when it is not JSON, undefined when there is none. */
  body: unknown;
}

export interface TasksApi {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
  /** The OpenAPI document with its server url filled in ("json" by default). */
  document(format?: "json" | "yaml"): string;
  /** Clears `requests` and puts the tasks, comments and users back to the seed. */
  reset(): void;
}

type Status = "open" | "done";
type Priority = "low" | "normal" | "high";

interface Task {
  id: number;
  title: string;
  status: Status;
  priority: Priority;
  assignee: string | null;
  createdAt: string;
  subtasks: Task[];
}

interface Comment {
  id: number;
  taskId: number;
  text: string;
  createdAt: string;
}

interface User {
  id: string;
  name: string;
  email: string;
}

interface State {
  tasks: Task[];
  comments: Comment[];
  users: User[];
  nextTaskId: number;
  nextCommentId: number;
  /** Idempotency-Key → id of the task the first request with it created. */
  idempotency: Map<string, number>;
}

const SOURCE_URL = new URL("./tasks-api.openapi.yaml", import.meta.url);
const PRIORITIES: readonly string[] = ["low", "normal", "high"];
const STATUSES: readonly string[] = ["open", "done"];
const DEFAULT_SLOW_MS = 5000;
const DEFAULT_HUGE_BYTES = 20_000_000;

const SEED_USERS: User[] = [
  { id: "ada", name: "Ada Lovelace", email: "ada@example.com" },
  { id: "grace", name: "Grace Hopper", email: "grace@example.com" },
  { id: "alan", name: "Alan Turing", email: "alan@example.com" },
  { id: "katherine", name: "Katherine Johnson", email: "katherine@example.com" },
  { id: "linus", name: "Linus Torvalds", email: "linus@example.com" },
];

const SEED_TITLES: [string, Status, Priority, string | null][] = [
  ["Write the quarterly report", "open", "high", "ada"],
  ["Fix the login bug", "done", "high", "grace"],
  ["Plan the team offsite", "open", "normal", "alan"],
  ["Review the pull requests", "open", "normal", "grace"],
  ["Update the dependencies", "done", "low", null],
  ["Order new laptops", "open", "low", "katherine"],
  ["Migrate the database", "open", "high", "linus"],
  ["Write the release notes", "done", "normal", "ada"],
  ["Answer the support tickets", "open", "normal", null],
  ["Renew the TLS certificates", "done", "high", "linus"],
  ["Clean up the backlog", "open", "low", "alan"],
  ["Prepare the demo", "open", "normal", "katherine"],
  ["Archive old projects", "done", "low", null],
];

function seed(): State {
  const created = (n: number) => new Date(Date.UTC(2025, 0, 1, 9, n)).toISOString();
  const tasks: Task[] = SEED_TITLES.map(([title, status, priority, assignee], i) => ({
    id: i + 1,
    title,
    status,
    priority,
    assignee,
    createdAt: created(i),
    subtasks: [],
  }));
  // Task 1 has nested subtasks (two levels), for the recursive Task schema.
  tasks[0]!.subtasks = [
    {
      id: 101,
      title: "Collect the numbers",
      status: "done",
      priority: "normal",
      assignee: "ada",
      createdAt: created(20),
      subtasks: [
        {
          id: 103,
          title: "Ask finance for the spreadsheet",
          status: "done",
          priority: "low",
          assignee: null,
          createdAt: created(21),
          subtasks: [],
        },
      ],
    },
    {
      id: 102,
      title: "Draft the summary",
      status: "open",
      priority: "high",
      assignee: "ada",
      createdAt: created(22),
      subtasks: [],
    },
  ];
  return {
    tasks,
    comments: [
      { id: 1, taskId: 1, text: "Numbers are in the shared folder.", createdAt: created(30) },
      { id: 2, taskId: 1, text: "Summary due Friday.", createdAt: created(31) },
      { id: 3, taskId: 3, text: "Somewhere with good coffee.", createdAt: created(32) },
    ],
    users: SEED_USERS.map((user) => ({ ...user })),
    nextTaskId: SEED_TITLES.length + 1,
    nextCommentId: 4,
    idempotency: new Map(),
  };
}

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const badRequest = (message: string) => new HttpError(400, "invalid_request", message);
const notFound = (message: string) => new HttpError(404, "not_found", message);

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sendError(res: ServerResponse, error: HttpError): void {
  const headers: Record<string, string> = error.status === 401 ? { "www-authenticate": 'Bearer realm="tasks"' } : {};
  sendJson(res, error.status, { code: error.code, message: error.message }, headers);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function integerParam(query: Record<string, string>, name: string, fallback: number, min: number, max = Infinity) {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || value < min || value > max) {
    throw badRequest(`${name} must be an integer from ${min}${max === Infinity ? " up" : ` to ${max}`}`);
  }
  return value;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("the body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

function encodeCursor(afterId: number): string {
  return Buffer.from(JSON.stringify({ after: afterId })).toString("base64url");
}

function decodeCursor(cursor: string): number {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    if (typeof value.after === "number" && Number.isInteger(value.after)) return value.after;
  } catch {
    // fall through
  }
  throw badRequest("cursor is not one this API gave out");
}

export async function startTasksApi(options: { token?: string } = {}): Promise<TasksApi> {
  const token = options.token ?? "secret-token";
  const source = readFileSync(SOURCE_URL, "utf8");
  let state = seed();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let url = "";

  const yamlText = () => source.replaceAll("{{SERVER_URL}}", url);
  const jsonText = () => `${JSON.stringify(parseYaml(yamlText()), null, 2)}\n`;

  const findTask = (rawId: string): Task => {
    if (!/^\d+$/.test(rawId)) throw badRequest("taskId must be a positive integer");
    const task = state.tasks.find((t) => t.id === Number(rawId));
    if (!task) throw notFound(`no task ${rawId}`);
    return task;
  };

  const checkAssignee = (assignee: unknown): string | null => {
    if (assignee === null) return null;
    if (typeof assignee !== "string") throw badRequest("assignee must be a user id");
    if (!state.users.some((user) => user.id === assignee)) throw badRequest(`no user ${assignee}`);
    return assignee;
  };

  async function handle(req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): Promise<void> {
    const { method, path, query } = recorded;

    if (method === "GET" && path === "/openapi.json") {
      const text = jsonText();
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(text);
      return;
    }
    if (method === "GET" && path === "/openapi.yaml") {
      res.writeHead(200, { "content-type": "application/yaml; charset=utf-8" });
      res.end(yamlText());
      return;
    }
    if (method === "GET" && path === "/health") {
      sendJson(res, 200, { ok: true });
      return;
    }

    if (req.headers.authorization !== `Bearer ${token}`) {
      throw new HttpError(
        401,
        "unauthorized",
        req.headers.authorization ? "the bearer token is wrong" : "an Authorization: Bearer header is required",
      );
    }

    const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
    const route = (pattern: string) => {
      const parts = pattern.split("/").filter(Boolean);
      if (parts.length !== segments.length) return false;
      return parts.every((part, i) => part.startsWith(":") || part === segments[i]);
    };
    const allow = (...methods: string[]) => {
      if (!methods.includes(method)) {
        throw new HttpError(405, "method_not_allowed", `${method} is not allowed on ${path}`);
      }
    };

    if (route("/tasks")) {
      allow("GET", "POST");
      if (method === "GET") {
        const status = query.status;
        if (status !== undefined && !STATUSES.includes(status)) throw badRequest("status must be open or done");
        const limit = integerParam(query, "limit", 10, 1, 50);
        const after = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
        const matching = state.tasks.filter((t) => (status === undefined || t.status === status) && t.id > after);
        const items = matching.slice(0, limit);
        const last = items.at(-1);
        sendJson(res, 200, matching.length > limit && last ? { items, nextCursor: encodeCursor(last.id) } : { items });
        return;
      }
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
        assignee: body.assignee === undefined ? null : checkAssignee(body.assignee),
        createdAt: new Date().toISOString(),
        subtasks: [],
      };
      state.tasks.push(task);
      if (key !== undefined) state.idempotency.set(key, task.id);
      sendJson(res, 201, task, { location: `/tasks/${task.id}` });
      return;
    }

    if (route("/tasks/:taskId")) {
      allow("GET", "HEAD", "PATCH", "DELETE");
      const rawId = segments[1]!;
      if (method === "HEAD") {
        const exists = /^\d+$/.test(rawId) && state.tasks.some((t) => t.id === Number(rawId));
        res.writeHead(exists ? 200 : 404);
        res.end();
        return;
      }
      const task = findTask(rawId);
      if (method === "GET") {
        sendJson(res, 200, task);
        return;
      }
      if (method === "DELETE") {
        state.tasks = state.tasks.filter((t) => t !== task);
        state.comments = state.comments.filter((c) => c.taskId !== task.id);
        res.writeHead(204);
        res.end();
        return;
      }
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
          updated.assignee = checkAssignee(value);
        } else {
          throw badRequest(`unknown field ${name}`);
        }
      }
      Object.assign(task, updated);
      sendJson(res, 200, task);
      return;
    }

    if (route("/tasks/:taskId/comments")) {
      allow("GET", "POST");
      const task = findTask(segments[1]!);
      if (method === "GET") {
        sendJson(
          res,
          200,
          state.comments.filter((c) => c.taskId === task.id),
        );
        return;
      }
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
      return;
    }

    if (route("/tasks/:taskId/mislabelled")) {
      allow("GET");
      sendJson(res, 200, { id: "not-a-number" });
      return;
    }

    if (route("/users")) {
      allow("GET");
      const page = integerParam(query, "page", 1, 1);
      const perPage = integerParam(query, "per_page", 20, 1, 100);
      const users = state.users.slice((page - 1) * perPage, page * perPage);
      sendJson(res, 200, { users, page, total: state.users.length });
      return;
    }

    if (route("/users/:userId")) {
      allow("GET");
      const user = state.users.find((u) => u.id === segments[1]);
      if (!user) throw notFound(`no user ${segments[1]}`);
      sendJson(res, 200, user);
      return;
    }

    if (route("/stats")) {
      allow("GET");
      sendJson(res, 200, {
        open: state.tasks.filter((t) => t.status === "open").length,
        done: state.tasks.filter((t) => t.status === "done").length,
      });
      return;
    }

    if (route("/reports/broken")) {
      allow("GET");
      sendJson(res, 500, { code: "internal", message: "the report generator crashed" });
      return;
    }

    if (route("/reports/slow")) {
      allow("GET");
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
      return;
    }

    if (route("/reports/huge")) {
      allow("GET");
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
      return;
    }

    if (route("/search")) {
      allow("GET");
      const q = query.q;
      if (q === undefined || q === "") throw badRequest("q is required");
      const needle = q.toLowerCase();
      sendJson(res, 200, { results: state.tasks.filter((t) => t.title.toLowerCase().includes(needle)) });
      return;
    }

    throw notFound(`no route for ${method} ${path}`);
  }

  const server = createServer((req, res) => {
    const parsed = new URL(req.url ?? "/", "http://127.0.0.1");
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    }
    readBody(req)
      .then(async (body) => {
        const recorded: RecordedRequest = {
          method: (req.method ?? "GET").toUpperCase(),
          path: parsed.pathname,
          query: Object.fromEntries(parsed.searchParams),
          headers,
          body,
        };
        requests.push(recorded);
        await handle(req, res, recorded);
      })
      .catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        sendError(
          res,
          error instanceof HttpError
            ? error
            : new HttpError(500, "internal", error instanceof Error ? error.message : String(error)),
        );
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    document: (format = "json") => (format === "yaml" ? yamlText() : jsonText()),
    reset() {
      requests.length = 0;
      state = seed();
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
