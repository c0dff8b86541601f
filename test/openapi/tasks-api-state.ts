/**
 * The tasks API's state: its tasks (task 1 with nested subtasks), comments and users, seeded the
 * same on every start and reset, and the lookups its routes share.
 */
import { badRequest, notFound } from "./tasks-api-http.ts";

export type Status = "open" | "done";
export type Priority = "low" | "normal" | "high";

export interface Task {
  id: number;
  title: string;
  status: Status;
  priority: Priority;
  assignee: string | null;
  createdAt: string;
  subtasks: Task[];
}

export interface Comment {
  id: number;
  taskId: number;
  text: string;
  createdAt: string;
}

export interface User {
  id: string;
  name: string;
  email: string;
}

export interface State {
  tasks: Task[];
  comments: Comment[];
  users: User[];
  nextTaskId: number;
  nextCommentId: number;
  /** Idempotency-Key → id of the task the first request with it created. */
  idempotency: Map<string, number>;
}

/** The values a task's priority and status may take. */
export const PRIORITIES: readonly string[] = ["low", "normal", "high"];
export const STATUSES: readonly string[] = ["open", "done"];

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

/** A fresh copy of the seed: 13 tasks, 3 comments, 5 users. */
export function seed(): State {
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

/** The task `rawId` names; 400 when it is not a positive integer, 404 when there is none. */
export function findTask(state: State, rawId: string): Task {
  if (!/^\d+$/.test(rawId)) throw badRequest("taskId must be a positive integer");
  const task = state.tasks.find((t) => t.id === Number(rawId));
  if (!task) throw notFound(`no task ${rawId}`);
  return task;
}

/** A user id (or null) to assign a task to; 400 for anything else. */
export function checkAssignee(state: State, assignee: unknown): string | null {
  if (assignee === null) return null;
  if (typeof assignee !== "string") throw badRequest("assignee must be a user id");
  if (!state.users.some((user) => user.id === assignee)) throw badRequest(`no user ${assignee}`);
  return assignee;
}
