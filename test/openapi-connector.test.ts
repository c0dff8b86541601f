/**
 * R-CN-OA: `openApiConnector` against a real HTTP API on 127.0.0.1 described by its own OpenAPI
 * 3.1 document (test/openapi/tasks-api.ts): reads run without a pause, a create pauses and is sent
 * once with its idempotency key however often the program is replayed, nothing reaches another
 * host, HTTP errors are errors the program catches, and describe shows the generated TypeScript.
 * The document works as JSON text, as YAML text and as an object.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { openApiConnector } from "@codemode/core/openapi";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTasksApi, type TasksApi } from "./openapi/tasks-api.ts";

let api: TasksApi;
beforeAll(async () => {
  api = await startTasksApi();
});
afterAll(async () => {
  await api.close();
});
const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  api.reset();
});

const AUTH = { Authorization: "Bearer secret-token" };

function tasksRuntime(spec: unknown = api.document("json"), extra: Record<string, unknown> = {}) {
  const fetched: string[] = [];
  const tasks = openApiConnector({
    name: "tasks",
    spec,
    headers: AUTH,
    fetch: (input, init) => {
      fetched.push(String(input));
      return fetch(input, init);
    },
    ...extra,
  });
  const runtime = createCodemodeRuntime({ connectors: [tasks] });
  runtimes.push(runtime);
  return { runtime, fetched, tasks };
}

describe("R-CN-OA openApiConnector against a real HTTP API", () => {
  it("R-CN-OA lists, reads, creates and deletes: reads never pause, a create runs once with its idempotency key", async () => {
    const { runtime, fetched } = tasksRuntime();
    const code = `async () => {
      const ids = [];
      let cursor;
      do {
        const page = await tasks.listTasks({ limit: 5, ...(cursor ? { cursor } : {}) });
        ids.push(...page.items.map((task) => task.id));
        cursor = page.nextCursor;
      } while (cursor);
      const open = await tasks.listTasks({ status: "open", limit: 50 });
      const first = await tasks.getTask({ taskId: 1 });
      const created = await tasks.createTask({ body: { title: "Order pens", priority: "high" } });
      const again = await tasks.getTask({ taskId: created.id });
      await tasks.deleteTask({ taskId: created.id });
      let gone;
      try { await tasks.getTask({ taskId: created.id }); } catch (error) { gone = error.message; }
      return { ids, open: open.items.every((task) => task.status === "open"), first: first.subtasks.length, created: again.title, gone };
    }`;
    const paused = await runtime.execute({ code });
    expect(paused.status).toBe("paused");
    // Four reads ran before the create paused; none of them waited for anyone.
    expect(api.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "GET /tasks",
      "GET /tasks",
      "GET /tasks",
      "GET /tasks",
      "GET /tasks/1",
    ]);
    const createdPause = await runtime.approve({ executionId: paused.executionId, by: "ops" });
    // The delete pauses in turn: the program runs again, its reads and its create replayed from the log.
    expect(createdPause.status).toBe("paused");
    const done = await runtime.approve({ executionId: paused.executionId, by: "ops" });
    expect(done).toMatchObject({ status: "completed" });
    if (done.status !== "completed") return;
    expect(done.result).toMatchObject({
      ids: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
      open: true,
      first: 2,
      created: "Order pens",
    });
    expect((done.result as { gone: string }).gone).toMatch(/^tasks\.getTask: HTTP 404 Not Found: /);
    const posts = api.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(1);
    const createSeq = done.calls!.find((call) => call.method === "createTask")!.seq;
    expect(posts[0]!.headers["idempotency-key"]).toBe(`${paused.executionId}:${createSeq}`);
    expect(posts[0]!.body).toEqual({ title: "Order pens", priority: "high" });
    const deletes = api.requests.filter((request) => request.method === "DELETE");
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.headers["idempotency-key"]).toMatch(new RegExp(`^${paused.executionId}:\\d+$`));
    // Reads carry no idempotency key; every request went to the API's own origin.
    expect(api.requests.filter((request) => request.method === "GET").every((r) => !r.headers["idempotency-key"])).toBe(
      true,
    );
    expect(fetched.every((url) => url.startsWith(`${api.url}/`))).toBe(true);
  });

  it("R-CN-OA a 500 is an error the program catches; a slow or huge answer is an error, not a hang", async () => {
    const { runtime } = tasksRuntime(api.document("json"), { timeoutMs: 300, maxResponseBytes: 50_000 });
    const outcome = await runtime.execute({
      code: `async () => {
        const caught = [];
        for (const call of [() => tasks.brokenReport(), () => tasks.slowReport({ ms: 5000 }), () => tasks.hugeReport({ bytes: 200000 }), () => tasks.hugeReport({ bytes: 200000, contentLength: true })]) {
          try { await call(); caught.push("no error"); } catch (error) { caught.push(error.message); }
        }
        return caught;
      }`,
    });
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    const [broken, slow, chunked, declared] = outcome.result as string[];
    expect(broken).toBe(
      'tasks.brokenReport: HTTP 500 Internal Server Error: {"code":"internal","message":"the report generator crashed"}',
    );
    expect(slow).toBe("tasks.slowReport: GET /reports/slow ran out of time");
    expect(chunked).toBe("tasks.hugeReport: the response is over 50,000 bytes (maxResponseBytes)");
    expect(declared).toBe(chunked);
  });

  it("R-CN-OA no request reaches another host: path values are encoded, redirects are not followed", async () => {
    const { runtime, fetched } = tasksRuntime();
    const outcome = await runtime.execute({
      code: `async () => {
        const tried = [];
        for (const userId of ["../tasks/1", "..", "", "x/./y", "http://evil.example/x", "@evil.example", "ada?x=1#y"]) {
          try { tried.push((await tasks.getUser({ userId })).id); } catch (error) { tried.push(error.message.split(":")[1].trim()); }
        }
        try { await tasks.getTask({ taskId: 1, url: "http://evil.example" }); } catch (error) { tried.push(error.message.split("\\n")[0]); }
        return tried;
      }`,
    });
    expect(outcome.status).toBe("completed");
    expect(outcome.status === "completed" && outcome.result).toEqual([
      'the path parameter userId cannot step up the path ("../tasks/1")',
      'the path parameter userId cannot step up the path ("..")',
      "the path parameter userId cannot be empty",
      'the path parameter userId cannot step up the path ("x/./y")',
      "HTTP 404 Not Found",
      "HTTP 404 Not Found",
      "HTTP 404 Not Found",
      "Invalid arguments for tasks.getTask:",
    ]);
    expect(fetched).toHaveLength(3);
    for (const url of fetched) expect(new URL(url).origin).toBe(api.url);
    expect(api.requests.map((request) => request.path)).toEqual([
      "/users/http%3A%2F%2Fevil.example%2Fx",
      "/users/%40evil.example",
      "/users/ada%3Fx%3D1%23y",
    ]);

    // A server that answers with a redirect elsewhere: the answer is an error, the redirect is not followed.
    const asked: string[] = [];
    const redirected = openApiConnector({
      name: "tasks",
      spec: api.document("json"),
      fetch: async (input) => {
        asked.push(String(input));
        return new Response(null, { status: 302, headers: { location: "http://evil.example/steal" } });
      },
    });
    const other = createCodemodeRuntime({ connectors: [redirected] });
    runtimes.push(other);
    const moved = await other.execute({
      code: "async () => { try { await tasks.getStats(); } catch (error) { return error.message; } }",
    });
    expect(moved.status === "completed" && moved.result).toBe(
      "tasks.getStats: HTTP 302 (a redirect to http://evil.example/steal, not followed)",
    );
    expect(asked).toEqual([`${api.url}/stats`]);
  });

  it("R-CN-OA credentials go only to operations whose security asks for them", async () => {
    const { runtime } = tasksRuntime(api.document("json"), { headers: { ...AUTH, "X-Team": "blue" } });
    const outcome = await runtime.execute({ code: "async () => [await tasks.getHealth(), await tasks.getStats()]" });
    expect(outcome.status).toBe("completed");
    const [health, stats] = api.requests;
    expect(health).toMatchObject({ path: "/health", headers: { "x-team": "blue" } });
    expect(health!.headers.authorization).toBeUndefined();
    expect(stats).toMatchObject({
      path: "/stats",
      headers: { authorization: "Bearer secret-token", "x-team": "blue" },
    });
  });
});

describe("R-CN-OA openApiConnector's document: schemas, generated types and creation errors", () => {
  it("R-CN-OA a result that breaks the document's schema is an error the program catches", async () => {
    const { runtime } = tasksRuntime();
    const outcome = await runtime.execute({
      code: "async () => { try { return await tasks.getMislabelled({ taskId: 1 }); } catch (error) { return error.message; } }",
    });
    expect(outcome.status === "completed" && outcome.result).toMatch(
      /^TOOL_OUTPUT_INVALID: the result of tasks.getMislabelled does not match its outputSchema:\n- result.title: missing required property\n(.*\n){4}- and 2 more$/,
    );
  });

  it("R-CN-OA codemode.describe shows the generated TypeScript, recursive and enum schemas included", async () => {
    const { runtime } = tasksRuntime();
    const outcome = await runtime.execute({
      code: 'async () => [await codemode.describe("tasks"), await codemode.search("create a task")]',
    });
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    const [described, found] = outcome.result as [{ declaration: string }, { results: Array<{ path: string }> }];
    expect(described.declaration).toContain("subtasks: Task[];");
    expect(described.declaration).toContain('type Priority = "low" | "normal" | "high";');
    expect(described.declaration).toContain("createTask(args: { body: tasks.NewTask }): Promise<tasks.Task>;");
    expect(described.declaration).toContain(
      'listTasks(args?: {\n    /** Only tasks with this status. */\n    status?: "open" | "done";',
    );
    expect(described.declaration).toContain("Needs approval: the execution pauses at this call");
    expect(found.results[0]?.path).toBe("tasks.createTask");
  });

  it("R-CN-OA the same document as YAML text and as an object gives the same methods and schemas", async () => {
    const fromJson = tasksRuntime(api.document("json")).tasks;
    const fromYaml = tasksRuntime(api.document("yaml")).tasks;
    const fromObject = tasksRuntime(JSON.parse(api.document("json"))).tasks;
    const shape = (connector: typeof fromJson) =>
      Object.entries(connector.tools).map(([name, tool]) => [name, tool.inputSchema, tool.outputSchema, tool.readOnly]);
    expect(shape(fromYaml)).toEqual(shape(fromJson));
    expect(shape(fromObject)).toEqual(shape(fromJson));
    const { runtime } = tasksRuntime(api.document("yaml"));
    const outcome = await runtime.execute({ code: "async () => (await tasks.getUser({ userId: 'ada' })).name" });
    expect(outcome).toMatchObject({ status: "completed", result: "Ada Lovelace" });
  });

  it("R-CN-OA operations, approval and bad documents: clear errors at creation", () => {
    const spec = api.document("json");
    const chosen = openApiConnector({ name: "t", spec, operations: ["getTask", "get_search"], approval: "always" });
    expect(Object.keys(chosen.tools)).toEqual(["getTask", "get_search"]);
    expect(chosen.tools.getTask?.requiresApproval).toBe(true);
    const never = openApiConnector({ name: "t", spec, approval: "never" });
    expect(never.tools.createTask?.requiresApproval).toBeUndefined();
    const byMethod = openApiConnector({ name: "t", spec, approval: (operation) => operation.method === "DELETE" });
    expect([byMethod.tools.deleteTask?.requiresApproval, byMethod.tools.createTask?.requiresApproval]).toEqual([
      true,
      undefined,
    ]);
    expect(() => openApiConnector({ name: "t", spec, operations: ["nope"] })).toThrow(
      'openApiConnector("t"): the document has no operation "nope"',
    );
    expect(() => openApiConnector({ name: "t", spec: "swagger: '2.0'\ninfo: {}" })).toThrow(/Swagger 2.0 document/);
    expect(() => openApiConnector({ name: "t", spec: "{ not json" })).toThrow(/neither JSON nor YAML/);
    expect(() =>
      openApiConnector({
        name: "t",
        spec: { openapi: "3.1.0", info: {}, paths: { "/x": { get: { operationId: "x" } } } },
      }),
    ).toThrow('openApiConnector("t"): the document names no server; give baseUrl');
    expect(() =>
      openApiConnector({
        name: "t",
        baseUrl: "http://127.0.0.1:1",
        spec: {
          openapi: "3.1.0",
          paths: { "/x": { get: { responses: { 200: { $ref: "https://elsewhere.example/r.json" } } } } },
        },
      }),
    ).toThrow(/points outside the document/);
    expect(() => openApiConnector({ name: "t", spec, approval: "sometimes" as "never" })).toThrow(/approval must be/);
    // A program's connector needs a server origin, never a file or data URL.
    expect(() => openApiConnector({ name: "t", spec, baseUrl: "file:///etc" })).toThrow(/over http or https/);
    expect(defineConnector).toBeTypeOf("function");
  });
});
