/**
 * The imitated model of the stories of tools the model calls directly (R-CN-OA): a question about
 * counts is answered with the direct stats tool, a list with a program, a new task with the direct
 * create tool; after a tool result it reports what it saw. And the connector those stories use:
 * the tasks API's OpenAPI document, stats and create called by the model only.
 */
import { openApiConnector } from "@codemode/core/openapi";
import type { TasksApi } from "../openapi/tasks-api.ts";
import type { Item, Reply } from "./server.ts";

export const LIST_PROGRAM = `async () => {
  const page = await tasks.listTasks({ status: "open", limit: 3 });
  return page.items.map((task) => task.title);
}`;

export function tasksModel(items: Item[]): Reply {
  const last = items.at(-1);
  if (last?.type === "result") return { text: `I saw: ${last.output}` };
  const asked = items.findLast((item) => item.type === "text" && item.role === "user");
  const text = asked?.type === "text" ? asked.text : "";
  if (/how many/i.test(text)) return { call: { name: "tasks_getStats", arguments: {} } };
  if (/list/i.test(text)) return { call: { name: "codemode", arguments: { code: LIST_PROGRAM } } };
  if (/create/i.test(text)) return { call: { name: "tasks_createTask", arguments: { body: { title: "Order pens" } } } };
  return { text: "How can I help?" };
}

/** The tasks API as a connector: getStats and createTask are the model's to call, the rest programs'. */
export function tasksConnector(api: TasksApi) {
  return openApiConnector({
    name: "tasks",
    spec: api.document("yaml"),
    headers: { Authorization: "Bearer secret-token" },
    callers: (operation) => (operation.name === "getStats" || operation.name === "createTask" ? ["model"] : ["code"]),
  });
}
