import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./define-connector.js";
import { declareValue, expectErrorsOnMarkedLines } from "./schema-fixtures.js";
import { jsonSchemaToType } from "./schema-to-typescript.js";

describe("jsonSchemaToType: composition and nullable", () => {
  it("writes anyOf and oneOf as unions", () => {
    const idOrName: JsonSchema = { anyOf: [{ type: "integer" }, { type: "string" }] };
    expect(jsonSchemaToType(idOrName)).toBe("number | string");
    const shape: JsonSchema = {
      oneOf: [
        {
          type: "object",
          properties: { kind: { const: "circle" }, radius: { type: "number" } },
          required: ["kind", "radius"],
        },
        {
          type: "object",
          properties: { kind: { const: "square" }, side: { type: "number" } },
          required: ["kind", "side"],
        },
      ],
    };
    expectErrorsOnMarkedLines(
      declareValue(shape),
      [
        'const circle: Value = { kind: "circle", radius: 1 };',
        'const square: Value = { kind: "square", side: 2 };',
        'const mixed: Value = { kind: "circle", side: 2 }; // error',
        'if (value.kind === "circle") value.radius.toFixed();',
      ].join("\n"),
    );
  });

  it("writes allOf as an intersection, parenthesising unions", () => {
    const named: JsonSchema = {
      allOf: [
        { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
        { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      ],
    };
    expect(jsonSchemaToType(named)).toBe("{ id: number } & { name: string }");
    expect(jsonSchemaToType({ allOf: [{ type: ["string", "number"] }, { type: ["number", "boolean"] }] })).toBe(
      "(string | number) & (number | boolean)",
    );
    expectErrorsOnMarkedLines(
      declareValue(named),
      ['const both: Value = { id: 1, name: "a" };', "const idOnly: Value = { id: 1 }; // error"].join("\n"),
    );
  });

  it("intersects a base type with its anyOf branches, ignoring branches that say nothing to a type", () => {
    const contact: JsonSchema = {
      type: "object",
      properties: { email: { type: "string" }, phone: { type: "string" } },
      anyOf: [{ required: ["email"] }, { required: ["phone"] }],
    };
    expectErrorsOnMarkedLines(
      declareValue(contact),
      [
        'const byEmail: Value = { email: "a@b.c" };',
        'const byPhone: Value = { phone: "1" };',
        "const neither: Value = {}; // error",
      ].join("\n"),
    );
    expect(jsonSchemaToType({ type: "string", anyOf: [{ format: "email" }, { format: "uri" }] })).toBe("string");
  });

  it("adds null for OpenAPI's nullable: true", () => {
    expect(jsonSchemaToType({ type: "string", nullable: true })).toBe("string | null");
    expectErrorsOnMarkedLines(
      declareValue({
        type: "object",
        properties: { closedAt: { type: "string", nullable: true } },
        required: ["closedAt"],
      }),
      [
        "const open: Value = { closedAt: null };",
        'const closed: Value = { closedAt: "2026-01-01" };',
        "const missing: Value = {}; // error",
      ].join("\n"),
    );
  });
});
