/**
 * R-CN-OA with hostile documents and answers: each is refused at creation with a sentence that
 * names the connector and the place, or answered as an error the program catches; none hangs,
 * exhausts memory or reaches past the connector's origin.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { OpenApiDocumentError, openApiConnector } from "@codemode/core/openapi";
import { describe, expect, it } from "vitest";

const BASE = "http://127.0.0.1:9";
const op = (extra: Record<string, unknown> = {}) => ({
  responses: { 200: { description: "ok", content: { "application/json": { schema: { type: "object" } } } } },
  ...extra,
});

describe("R-CN-OA hostile documents", () => {
  it("R-CN-OA a YAML alias bomb is refused, not expanded", () => {
    const lines = ["openapi: 3.1.0", 'a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let level = 1; level < 12; level++) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      lines.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(",")}]`);
    }
    lines.push("paths: {}");
    const started = Date.now();
    expect(() => openApiConnector({ name: "bomb", spec: lines.join("\n"), baseUrl: BASE })).toThrow(
      /openApiConnector\("bomb"\): the spec is neither JSON nor YAML \(.*alias/i,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("R-CN-OA a schema nested without end is refused with its place; a $ref loop is named", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 5_000; level++) schema = { type: "object", properties: { x: schema } };
    const deep = {
      openapi: "3.1.0",
      paths: { "/deep": { post: op({ requestBody: { content: { "application/json": { schema } } } }) } },
    };
    expect(() => openApiConnector({ name: "deep", spec: deep, baseUrl: BASE })).toThrow(
      'openApiConnector("deep"): POST /deep: a schema is nested more than 200 levels deep',
    );
    const loop = {
      openapi: "3.1.0",
      components: {
        parameters: { A: { $ref: "#/components/parameters/B" }, B: { $ref: "#/components/parameters/A" } },
      },
      paths: { "/x": { get: op({ parameters: [{ $ref: "#/components/parameters/A" }] }) } },
    };
    expect(() => openApiConnector({ name: "loop", spec: loop, baseUrl: BASE })).toThrow(/is part of a loop/);
    expect(
      OpenApiDocumentError.isInstance(captured(() => openApiConnector({ name: "loop", spec: loop, baseUrl: BASE }))),
    ).toBe(true);
  });

  it("R-CN-OA names that would reach an object's prototype stay plain method names", async () => {
    const spec = {
      openapi: "3.1.0",
      components: { schemas: { __proto__: { type: "object", properties: { polluted: { type: "boolean" } } } } },
      paths: {
        "/a": { get: op({ operationId: "__proto__" }) },
        "/b": {
          get: op({
            operationId: "constructor",
            parameters: [{ name: "__proto__", in: "query", schema: { type: "string" } }],
          }),
        },
        "/c": {
          get: op({
            operationId: "toString",
            responses: {
              200: {
                description: "ok",
                content: { "application/json": { schema: { $ref: "#/components/schemas/__proto__" } } },
              },
            },
          }),
        },
      },
    };
    const answers: string[] = [];
    const connector = openApiConnector({
      name: "odd",
      spec: JSON.parse(JSON.stringify(spec).replace('"schemas":{}', '"schemas":{"__proto__":{"type":"object"}}')),
      baseUrl: BASE,
      fetch: async (url) => {
        answers.push(String(url));
        return Response.json({});
      },
    });
    expect(Object.keys(connector.tools).sort()).toEqual(["__proto___", "constructor_", "toString"].sort());
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const runtime = createCodemodeRuntime({ connectors: [connector] });
    try {
      const outcome = await runtime.execute({ code: "async () => odd.toString()" });
      expect(outcome).toMatchObject({ status: "completed", result: {} });
      expect(answers).toEqual([`${BASE}/c`]);
    } finally {
      await runtime.close();
    }
  });
});

function captured(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}
