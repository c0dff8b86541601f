import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./define-connector.js";
import { declareValue, expectCompiles, expectErrorsOnMarkedLines } from "./schema-fixtures.js";
import { jsonSchemaToType } from "./schema-to-typescript.js";

describe("jsonSchemaToType: $ref", () => {
  const tree: JsonSchema = {
    type: "object",
    properties: { root: { $ref: "#/$defs/TreeNode" } },
    required: ["root"],
    $defs: {
      TreeNode: {
        type: "object",
        properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/TreeNode" } } },
        required: ["name", "children"],
      },
    },
  };

  it("declares a recursive definition once, by name, and the recursion type-checks", () => {
    const namedTypes = new Map<string, string>();
    expect(jsonSchemaToType(tree, { namedTypes })).toBe("{ root: TreeNode }");
    expect([...namedTypes.keys()]).toEqual(["TreeNode"]);
    expect(namedTypes.get("TreeNode")).toContain("children: TreeNode[]");
    expectErrorsOnMarkedLines(
      declareValue(tree),
      [
        'const ok: Value = { root: { name: "a", children: [{ name: "b", children: [] }] } };',
        'const deepWrong: Value = { root: { name: "a", children: [{ name: 1, children: [] }] } }; // error',
        "value.root.children[0]?.children[0]?.name.toUpperCase();",
      ].join("\n"),
    );
  });

  it("resolves draft-07 definitions the same way", () => {
    const namedTypes = new Map<string, string>();
    const schema: JsonSchema = {
      type: "array",
      items: { $ref: "#/definitions/user-name" },
      definitions: { "user-name": { type: "string" } },
    };
    expect(jsonSchemaToType(schema, { namedTypes })).toBe("UserName[]");
    expect(namedTypes.get("UserName")).toBe("string");
    expectCompiles(declareValue(schema), 'const names: Value = ["a"];');
  });

  it("writes definitions inline without a namedTypes map, and a recursion point as unknown", () => {
    expect(jsonSchemaToType(tree)).toBe("{ root: { name: string; children: unknown[] } }");
  });

  it("names a schema that refers to itself as a whole ($ref: '#')", () => {
    const list: JsonSchema = {
      type: "object",
      properties: { value: { type: "number" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } },
      required: ["value", "next"],
    };
    const namedTypes = new Map<string, string>();
    expect(jsonSchemaToType(list, { namedTypes, rootTypeName: "ListNode" })).toBe("ListNode");
    expect(namedTypes.get("ListNode")).toBe("{ value: number; next: ListNode | null }");
    expectErrorsOnMarkedLines(
      declareValue(list, { rootTypeName: "ListNode" }),
      [
        "const ok: Value = { value: 1, next: { value: 2, next: null } };",
        'const wrong: Value = { value: 1, next: { value: "2", next: null } }; // error',
      ].join("\n"),
    );
  });

  it("writes unknown for a reference it cannot follow", () => {
    expect(jsonSchemaToType({ $ref: "https://example.com/schema.json" })).toBe("unknown");
    expect(jsonSchemaToType({ $ref: "#/$defs/Missing" })).toBe("unknown");
    expect(jsonSchemaToType({ $ref: "#/$defs/%E0%A4%A" })).toBe("unknown");
  });

  it("stops at a JavaScript object that contains itself instead of recursing forever", () => {
    const cyclic: JsonSchema = { type: "object", properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    const loop: JsonSchema = { anyOf: [{ type: "string" }] };
    (loop.anyOf as unknown[]).push(loop);
    expect(jsonSchemaToType(cyclic)).toBe("{ self?: unknown }");
    expect(jsonSchemaToType(loop)).toBe("unknown");
  });

  it("follows JSON Pointer escapes in a reference", () => {
    expect(jsonSchemaToType({ $ref: "#/$defs/a~1b", $defs: { "a/b": { type: "boolean" } } })).toBe("boolean");
  });

  it("shares one name for the same definition across schemas, and numbers a different one", () => {
    const namedTypes = new Map<string, string>();
    const user: JsonSchema = { type: "object", properties: { id: { type: "integer" } }, required: ["id"] };
    const otherUser: JsonSchema = { type: "object", properties: { login: { type: "string" } }, required: ["login"] };
    expect(jsonSchemaToType({ $ref: "#/$defs/User", $defs: { User: user } }, { namedTypes })).toBe("User");
    expect(
      jsonSchemaToType({ type: "array", items: { $ref: "#/$defs/User" }, $defs: { User: user } }, { namedTypes }),
    ).toBe("User[]");
    expect(jsonSchemaToType({ $ref: "#/$defs/User", $defs: { User: otherUser } }, { namedTypes })).toBe("User2");
    expect([...namedTypes]).toEqual([
      ["User", "{ id: number }"],
      ["User2", "{ login: string }"],
    ]);
  });
});

describe("jsonSchemaToType: deterministic output", () => {
  it("gives the same text for the same schema every time", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { b: { $ref: "#/$defs/B" }, a: { enum: ["x", "y"] } },
      $defs: { B: { type: "object", properties: { self: { $ref: "#/$defs/B" } } } },
    };
    const first = new Map<string, string>();
    const second = new Map<string, string>();
    expect(jsonSchemaToType(schema, { namedTypes: first })).toBe(
      jsonSchemaToType(structuredClone(schema), { namedTypes: second }),
    );
    expect([...first]).toEqual([...second]);
  });
});
