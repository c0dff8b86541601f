import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./define-connector.js";
import { declareValue, expectErrorsOnMarkedLines } from "./schema-fixtures.js";
import { jsonSchemaToType } from "./schema-to-typescript.js";

/** `value` declared of the schema's type: the program lines marked `// error` fail, the others compile. */
function expectValueProgram(schema: JsonSchema, programLines: string[]): void {
  expectErrorsOnMarkedLines(declareValue(schema), programLines.join("\n"));
}

/** One branch of a tagged union: `{ kind: <kind>, <property>: number }`, both required. */
const taggedBranch = (kind: string, property: string): JsonSchema => ({
  type: "object",
  properties: { kind: { const: kind }, [property]: { type: "number" } },
  required: ["kind", property],
});

describe("jsonSchemaToType: composition and nullable", () => {
  it("writes anyOf and oneOf as unions", () => {
    const idOrName: JsonSchema = { anyOf: [{ type: "integer" }, { type: "string" }] };
    expect(jsonSchemaToType(idOrName)).toBe("number | string");
    const shape: JsonSchema = { oneOf: [taggedBranch("circle", "radius"), taggedBranch("square", "side")] };
    expectValueProgram(shape, [
      'const circle: Value = { kind: "circle", radius: 1 };',
      'const square: Value = { kind: "square", side: 2 };',
      'const mixed: Value = { kind: "circle", side: 2 }; // error',
      'if (value.kind === "circle") value.radius.toFixed();',
    ]);
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
    expectValueProgram(named, [
      'const both: Value = { id: 1, name: "a" };',
      "const idOnly: Value = { id: 1 }; // error",
    ]);
  });

  it("intersects a base type with its anyOf branches, ignoring branches that say nothing to a type", () => {
    const contact: JsonSchema = {
      type: "object",
      properties: { email: { type: "string" }, phone: { type: "string" } },
      anyOf: [{ required: ["email"] }, { required: ["phone"] }],
    };
    expectValueProgram(contact, [
      'const byEmail: Value = { email: "a@b.c" };',
      'const byPhone: Value = { phone: "1" };',
      "const neither: Value = {}; // error",
    ]);
    expect(jsonSchemaToType({ type: "string", anyOf: [{ format: "email" }, { format: "uri" }] })).toBe("string");
  });

  it("adds null for OpenAPI's nullable: true", () => {
    expect(jsonSchemaToType({ type: "string", nullable: true })).toBe("string | null");
    const closedAt: JsonSchema = {
      type: "object",
      properties: { closedAt: { type: "string", nullable: true } },
      required: ["closedAt"],
    };
    expectValueProgram(closedAt, [
      "const open: Value = { closedAt: null };",
      'const closed: Value = { closedAt: "2026-01-01" };',
      "const missing: Value = {}; // error",
    ]);
  });
});
