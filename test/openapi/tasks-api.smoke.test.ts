/**
 * The fixtures of the openApiConnector tests work: the tasks API (tasks-api.ts) answers as its
 * document says, and the public document (public/asana.json) parses with 100+ operations.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { startTasksApi, type TasksApi } from "./tasks-api.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function operations(document: { paths?: Record<string, Record<string, { operationId?: string }>> }) {
  const found: { method: string; path: string; operationId: string | undefined }[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) found.push({ method, path, operationId: operation.operationId });
    }
  }
  return found;
}

describe("tasks API fixture", () => {
  let api: TasksApi;
  const auth = { authorization: "Bearer secret-token" };

  beforeAll(async () => {
    api = await startTasksApi();
  });
  afterAll(async () => {
    await api.close();
  });
  beforeEach(() => {
    api.reset();
  });

  test("answers 401 without the token, and records the request", async () => {
    const response = await fetch(`${api.url}/tasks`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "unauthorized", message: expect.any(String) });
    const wrong = await fetch(`${api.url}/tasks`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${api.url}/health`)).status).toBe(200);
    expect(api.requests.map((r) => [r.method, r.path])).toEqual([
      ["GET", "/tasks"],
      ["GET", "/tasks"],
      ["GET", "/health"],
    ]);
    expect(api.requests[1]!.headers.authorization).toBe("Bearer nope");
  });

  test("lists the seeded tasks across 3 pages of 5", async () => {
    const ids: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = new URLSearchParams({ limit: "5", ...(cursor ? { cursor } : {}) });
      const response = await fetch(`${api.url}/tasks?${query}`, { headers: auth });
      expect(response.status).toBe(200);
      const page = (await response.json()) as { items: { id: number }[]; nextCursor?: string };
      ids.push(...page.items.map((task) => task.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(3);
    expect(ids).toEqual([...new Set(ids)]);
    expect(ids.length).toBeGreaterThanOrEqual(12);
    expect(api.requests[1]!.query).toMatchObject({ limit: "5", cursor: expect.any(String) });
  });

  test("creates one task for two requests with the same Idempotency-Key", async () => {
    const create = () =>
      fetch(`${api.url}/tasks`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", "idempotency-key": "key-1" },
        body: JSON.stringify({ title: "Buy milk", priority: "high", assignee: "ada" }),
      });
    const first = await create();
    const second = await create();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    const a = (await first.json()) as { id: number };
    const b = (await second.json()) as { id: number };
    expect(b).toEqual(a);
    expect(a).toMatchObject({ title: "Buy milk", priority: "high", assignee: "ada", status: "open" });
    const search = await fetch(`${api.url}/search?q=milk`, { headers: auth });
    expect(((await search.json()) as { results: unknown[] }).results).toHaveLength(1);
    expect(api.requests[0]!.body).toEqual({ title: "Buy milk", priority: "high", assignee: "ada" });
    expect(api.requests[0]!.headers["idempotency-key"]).toBe("key-1");
  });

  test("brokenReport answers 500 with a JSON error", async () => {
    const response = await fetch(`${api.url}/reports/broken`, { headers: auth });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  test("serves its document with the server url and 15+ operations", async () => {
    const response = await fetch(`${api.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; servers: { url: string }[] };
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers).toEqual([{ url: api.url }]);
    expect(operations(document as never).length).toBeGreaterThanOrEqual(15);
    expect(JSON.parse(api.document())).toEqual(document);
    expect(parseYaml(api.document("yaml"))).toEqual(document);
    const yamlResponse = await fetch(`${api.url}/openapi.yaml`);
    expect(parseYaml(await yamlResponse.text())).toEqual(document);
  });
});

describe("public OpenAPI fixture", () => {
  test("public/asana.json parses and has 100+ operations", () => {
    const document = JSON.parse(readFileSync(new URL("./public/asana.json", import.meta.url), "utf8"));
    expect(document.openapi).toMatch(/^3\./);
    expect(operations(document).length).toBeGreaterThanOrEqual(100);
  });
});
