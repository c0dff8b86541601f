/**
 * R-CN-OA with documents as real APIs write them: a 204 beside a JSON 200, HEAD, component names
 * that are not plain keys, OpenAPI 3.0's nullable references, keywords beside a `$ref`, operations
 * that would get the same method name, formats an API strays from, a base URL with a query. Each
 * request is answered by a `fetch` the test controls, so what was sent is checked exactly.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { openApiConnector } from "@codemode/core/openapi";
import { describe, expect, it } from "vitest";

const BASE = "https://api.example.test/v1?api-version=7";
const json = (schema: unknown) => ({ description: "ok", content: { "application/json": { schema } } });

/** A connector over `spec` whose requests are recorded and answered by `answer`. */
function connectorOver(spec: Record<string, unknown>, answer: (url: URL, init?: RequestInit) => Response) {
  const sent: Array<{ method: string; url: string }> = [];
  const connector = openApiConnector({
    name: "api",
    spec: { openapi: "3.1.0", info: { title: "API" }, ...spec },
    baseUrl: BASE,
    approval: "never",
    fetch: async (input, init) => {
      const url = new URL(String(input));
      sent.push({ method: String(init?.method), url: url.href });
      return answer(url, init);
    },
  });
  return { connector, sent };
}

async function run(connector: ReturnType<typeof openApiConnector>, code: string) {
  const runtime = createCodemodeRuntime({ connectors: [connector] });
  try {
    return await runtime.execute({ code });
  } finally {
    await runtime.close();
  }
}

describe("R-CN-OA documents as APIs write them", () => {
  it("R-CN-OA a 204 beside a JSON 200 answers null, HEAD has no result to check, and the base URL's query goes along", async () => {
    const { connector, sent } = connectorOver(
      {
        paths: {
          "/items/{id}": {
            parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
            delete: {
              operationId: "removeItem",
              responses: { 200: json({ type: "object" }), 204: { description: "gone" } },
            },
            head: { operationId: "itemExists", responses: { 200: json({ type: "object", required: ["id"] }) } },
          },
        },
      },
      () => new Response(null, { status: 204 }),
    );
    expect(connector.tools.itemExists?.outputSchema).toBeUndefined();
    const outcome = await run(
      connector,
      "async () => [await api.removeItem({ id: 'a' }), await api.itemExists({ id: 'a' })]",
    );
    expect(outcome).toMatchObject({ status: "completed", result: [null, null] });
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      "DELETE https://api.example.test/v1/items/a?api-version=7",
      "HEAD https://api.example.test/v1/items/a?api-version=7",
    ]);
  });

  it("R-CN-OA component names that clash once rewritten keep their own types; keywords beside a $ref apply", async () => {
    const { connector } = connectorOver(
      {
        components: {
          schemas: {
            "My Thing": { type: "object", properties: { a: { type: "string" } } },
            My_Thing: { type: "object", required: ["b"], properties: { b: { type: "number" } } },
            Id: { type: "integer" },
          },
        },
        paths: {
          "/things": {
            post: {
              operationId: "addThing",
              requestBody: {
                content: {
                  "application/json": {
                    schema: {
                      type: "object",
                      required: ["id", "t", "u"],
                      properties: {
                        id: { $ref: "#/components/schemas/Id", readOnly: true },
                        t: { $ref: "#/components/schemas/My Thing" },
                        u: { $ref: "#/components/schemas/My_Thing" },
                      },
                    },
                  },
                },
              },
              responses: { 200: json({ type: "object" }) },
            },
          },
        },
      },
      () => Response.json({}),
    );
    const schema = connector.tools.addThing?.inputSchema as {
      properties: { body: { required?: string[] } };
      $defs: Record<string, unknown>;
    };
    // The read-only id is not asked of the request; the two components are two types.
    expect(schema.properties.body.required).toEqual(["t", "u"]);
    expect(Object.keys(schema.$defs).sort()).toEqual(["Id", "My_Thing", "My_Thing_2"]);
    const outcome = await run(connector, "async () => api.addThing({ body: { t: { a: 'x' }, u: { b: 1 } } })");
    expect(outcome).toMatchObject({ status: "completed", result: {} });
  });

  it("R-CN-OA OpenAPI 3.0 nullable references admit null; formats an API strays from do not fail a result", async () => {
    const { connector } = openApi30(() =>
      Response.json({ owner: null, manager: null, at: "2024-01-01T10:00:00", link: "/relative" }),
    );
    const outcome = await run(connector, "async () => api.getTeam({ since: '2024-01-01T10:00:00Z' })");
    expect(outcome).toMatchObject({ status: "completed", result: { owner: null, manager: null } });
    // Arguments are the program's: their formats are still checked.
    const refused = await run(
      connector,
      "async () => { try { await api.getTeam({ since: 'yesterday' }); } catch (e) { return e.message; } }",
    );
    expect(refused).toMatchObject({ status: "completed", result: expect.stringContaining("args.since") });
  });
});

describe("R-CN-OA requests as documents describe them", () => {
  it("R-CN-OA query arrays and objects are written as their style says: form, delimited, deepObject", async () => {
    const parameter = (name: string, schema: unknown, extra: Record<string, unknown> = {}) => ({
      name,
      in: "query",
      schema,
      ...extra,
    });
    const list = { type: "array", items: { type: "string" } };
    const object = { type: "object", additionalProperties: { type: "string" } };
    const { connector, sent } = connectorOver(
      {
        paths: {
          "/search": {
            get: {
              operationId: "search",
              parameters: [
                parameter("tag", list),
                parameter("ids", list, { explode: false }),
                parameter("words", list, { style: "spaceDelimited" }),
                parameter("filter", object, { style: "deepObject", explode: true }),
                parameter("range", object, { explode: false }),
              ],
              responses: { 200: json({}) },
            },
          },
        },
      },
      () => Response.json({}),
    );
    await run(
      connector,
      "async () => api.search({ tag: ['a', 'b'], ids: ['1', '2'], words: ['x', 'y'], filter: { status: 'open' }, range: { from: '1', to: '9' } })",
    );
    expect(decodeURIComponent(new URL(sent[0]!.url).search)).toBe(
      "?api-version=7&tag=a&tag=b&ids=1,2&words=x+y&filter[status]=open&range=from,1,to,9",
    );
  });

  it("R-CN-OA a headers function that never answers is bounded by the call's time limit", async () => {
    const stuck = openApiConnector({
      name: "api",
      baseUrl: BASE,
      spec: { openapi: "3.1.0", paths: { "/ping": { get: { operationId: "ping", responses: { 200: json({}) } } } } },
      headers: () => new Promise<Record<string, string>>(() => {}),
      timeoutMs: 200,
      fetch: async () => Response.json({}),
    });
    const outcome = await run(stuck, "async () => { try { await api.ping(); } catch (e) { return e.message; } }");
    expect(outcome).toMatchObject({ status: "completed", result: "api.ping: the headers function ran out of time" });
  });

  it("R-CN-OA two operations that would get one method name both stay, the later numbered", () => {
    const { connector } = connectorOver(
      {
        paths: {
          "/users/{id}": { get: { responses: { 200: json({}) } } },
          "/users/id": { get: { responses: { 200: json({}) } } },
          "/a": { get: { operationId: "same", responses: { 200: json({}) } } },
          "/b": { get: { operationId: "same", responses: { 200: json({}) } } },
        },
      },
      () => Response.json({}),
    );
    expect(Object.keys(connector.tools)).toEqual(["get_users_id", "get_users_id_2", "same", "same_2"]);
  });
});

function openApi30(answer: () => Response) {
  const person = { type: "object", properties: { name: { type: "string" } } };
  const sent: string[] = [];
  const connector = openApiConnector({
    name: "api",
    baseUrl: BASE,
    spec: {
      openapi: "3.0.3",
      info: { title: "Teams" },
      components: { schemas: { Person: person } },
      paths: {
        "/team": {
          get: {
            operationId: "getTeam",
            parameters: [{ name: "since", in: "query", schema: { type: "string", format: "date-time" } }],
            responses: {
              200: json({
                type: "object",
                properties: {
                  owner: { allOf: [{ $ref: "#/components/schemas/Person" }], nullable: true },
                  manager: { $ref: "#/components/schemas/Person", nullable: true },
                  at: { type: "string", format: "date-time" },
                  link: { type: "string", format: "uri" },
                },
              }),
            },
          },
        },
      },
    },
    fetch: async (input) => {
      sent.push(String(input));
      return answer();
    },
  });
  return { connector, sent };
}
