import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./define-connector.js";
import { declareValue, expectErrorsOnMarkedLines } from "./schema-fixtures.js";
import { jsonSchemaToType } from "./schema-to-typescript.js";

describe("jsonSchemaToType: primitive types", () => {
  it("writes each JSON type as its TypeScript type, integer as number", () => {
    expect(jsonSchemaToType({ type: "string" })).toBe("string");
    expect(jsonSchemaToType({ type: "number" })).toBe("number");
    expect(jsonSchemaToType({ type: "integer" })).toBe("number");
    expect(jsonSchemaToType({ type: "boolean" })).toBe("boolean");
    expect(jsonSchemaToType({ type: "null" })).toBe("null");
  });

  it("writes a list of types as a union that accepts each and nothing else", () => {
    const declarations = declareValue({ type: ["string", "integer", "null"] });
    expect(jsonSchemaToType({ type: ["string", "integer", "null"] })).toBe("string | number | null");
    expectErrorsOnMarkedLines(
      declarations,
      [
        'const text: Value = "a";',
        "const count: Value = 1;",
        "const nothing: Value = null;",
        "const flag: Value = true; // error",
      ].join("\n"),
    );
  });

  it("writes unknown for the true schema, an empty schema and a type it does not know; never for false", () => {
    expect(jsonSchemaToType(true)).toBe("unknown");
    expect(jsonSchemaToType({})).toBe("unknown");
    expect(jsonSchemaToType({ type: "date" })).toBe("unknown");
    expect(jsonSchemaToType({ type: "toString" })).toBe("unknown");
    expect(jsonSchemaToType({ description: "anything" })).toBe("unknown");
    expect(jsonSchemaToType(false)).toBe("never");
  });
});

describe("jsonSchemaToType: objects", () => {
  const person: JsonSchema = {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer" } },
    required: ["name"],
  };

  it("marks properties not in required as optional", () => {
    expect(jsonSchemaToType(person)).toBe("{ name: string; age?: number }");
    expectErrorsOnMarkedLines(
      declareValue(person),
      [
        'const full: Value = { name: "Ada", age: 36 };',
        'const nameOnly: Value = { name: "Ada" };',
        "const noName: Value = { age: 36 }; // error",
        'const wrongAge: Value = { name: "Ada", age: "36" }; // error',
        "value.age?.toFixed();",
        "value.age.toFixed(); // error",
      ].join("\n"),
    );
  });

  it("writes required names without a property schema as unknown members", () => {
    expect(jsonSchemaToType({ type: "object", required: ["id"] })).toBe("{ id: unknown }");
  });

  it("turns additionalProperties: true into an index signature of unknown", () => {
    const declarations = declareValue({
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: true,
    });
    expectErrorsOnMarkedLines(
      declarations,
      [
        'const extra: Value = { name: "a", anything: [1, 2] };',
        "value.name.toUpperCase();",
        "value.other.toUpperCase(); // error",
      ].join("\n"),
    );
  });

  it("turns an additionalProperties schema into an index signature the named properties also fit", () => {
    const counts: JsonSchema = {
      type: "object",
      properties: { label: { type: "string" }, note: { type: "string" } },
      required: ["label"],
      additionalProperties: { type: "integer" },
    };
    expectErrorsOnMarkedLines(
      declareValue(counts),
      [
        'const ok: Value = { label: "a", apples: 3, pears: 4 };',
        'const notCount: Value = { label: "a", apples: true }; // error',
        "value.label.toUpperCase();",
      ].join("\n"),
    );
    expect(jsonSchemaToType({ type: "object", additionalProperties: { type: "number" } })).toBe(
      "{ [key: string]: number }",
    );
  });

  it("writes patternProperties as an index signature", () => {
    expectErrorsOnMarkedLines(
      declareValue({ type: "object", patternProperties: { "^x-": { type: "string" } } }),
      ['const ok: Value = { "x-a": "b" };', 'const notText: Value = { "x-a": 1 }; // error'].join("\n"),
    );
  });

  it("writes an object without properties as a record of unknown, or of never when closed", () => {
    expect(jsonSchemaToType({ type: "object" })).toBe("{ [key: string]: unknown }");
    expect(jsonSchemaToType({ type: "object", additionalProperties: false })).toBe("{ [key: string]: never }");
  });

  it("quotes property names that are not identifiers, and they compile", () => {
    const headers: JsonSchema = {
      type: "object",
      properties: {
        "x-request-id": { type: "string" },
        "2fa": { type: "boolean" },
        "with space": { type: "number" },
        "": { type: "null" },
        $ok: { type: "string" },
      },
      required: ["x-request-id", "2fa", "with space", "", "$ok"],
    };
    const type = jsonSchemaToType(headers);
    expect(type).toContain('"x-request-id": string');
    expect(type).toContain('"2fa": boolean');
    expect(type).toContain('"with space": number');
    expect(type).toContain('"": null');
    expect(type).toContain("$ok: string");
    expectErrorsOnMarkedLines(
      declareValue(headers),
      [
        'const ok: Value = { "x-request-id": "r", "2fa": true, "with space": 1, "": null, $ok: "y" };',
        'value["x-request-id"].toUpperCase();',
        'value["2fa"].toUpperCase(); // error',
      ].join("\n"),
    );
  });

  it("infers an object from properties when type is missing", () => {
    expect(jsonSchemaToType({ properties: { a: { type: "string" } }, required: ["a"] })).toBe("{ a: string }");
  });
});

describe("jsonSchemaToType: arrays and tuples", () => {
  it("writes items as an array of that type, parenthesising a union", () => {
    expect(jsonSchemaToType({ type: "array", items: { type: "string" } })).toBe("string[]");
    expect(jsonSchemaToType({ type: "array", items: { type: ["string", "number"] } })).toBe("(string | number)[]");
    expect(jsonSchemaToType({ type: "array" })).toBe("unknown[]");
    expectErrorsOnMarkedLines(
      declareValue({ type: "array", items: { type: ["string", "number"] } }),
      ['const ok: Value = ["a", 1];', "const notAllowed: Value = [true]; // error"].join("\n"),
    );
  });

  it("writes draft 2020-12 prefixItems with items: false as a closed tuple", () => {
    const pair: JsonSchema = { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false };
    expect(jsonSchemaToType(pair)).toBe("[string, number]");
    expectErrorsOnMarkedLines(
      declareValue(pair),
      [
        'const ok: Value = ["a", 1];',
        'const swapped: Value = [1, "a"]; // error',
        'const tooLong: Value = ["a", 1, 2]; // error',
        "value[0].toUpperCase();",
        "value[1].toFixed();",
      ].join("\n"),
    );
  });

  it("writes prefixItems with an items schema as a tuple with a rest element", () => {
    const command: JsonSchema = { type: "array", prefixItems: [{ type: "string" }], items: { type: "boolean" } };
    expect(jsonSchemaToType(command)).toBe("[string, ...boolean[]]");
    expectErrorsOnMarkedLines(
      declareValue(command),
      ['const ok: Value = ["a", true, false];', 'const wrongRest: Value = ["a", 1]; // error'].join("\n"),
    );
  });

  it("leaves a tuple open when nothing closes it, as JSON Schema does", () => {
    expect(jsonSchemaToType({ type: "array", prefixItems: [{ type: "string" }] })).toBe("[string, ...unknown[]]");
  });

  it("writes the draft-07 form (items array + additionalItems) the same way", () => {
    expect(
      jsonSchemaToType({ type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false }),
    ).toBe("[string, number]");
    expect(jsonSchemaToType({ type: "array", items: [{ type: "string" }], additionalItems: { type: "number" } })).toBe(
      "[string, ...number[]]",
    );
    expect(jsonSchemaToType({ type: "array", items: [{ type: "string" }, { type: "number" }], maxItems: 2 })).toBe(
      "[string, number]",
    );
  });

  it("makes elements past minItems optional, parenthesising a union", () => {
    const range: JsonSchema = {
      type: "array",
      prefixItems: [{ type: "number" }, { type: ["number", "null"] }],
      items: false,
      minItems: 1,
    };
    expect(jsonSchemaToType(range)).toBe("[number, (number | null)?]");
    expectErrorsOnMarkedLines(
      declareValue(range),
      ["const one: Value = [1];", "const two: Value = [1, null];", "const none: Value = []; // error"].join("\n"),
    );
  });
});

describe("jsonSchemaToType: enum and const", () => {
  it("writes enum as a union of literals that rejects any other value", () => {
    const state: JsonSchema = { type: "string", enum: ["open", "closed"] };
    expect(jsonSchemaToType(state)).toBe('"open" | "closed"');
    expectErrorsOnMarkedLines(
      declareValue(state),
      ['const open: Value = "open";', 'const merged: Value = "merged"; // error'].join("\n"),
    );
  });

  it("writes numbers, negative numbers, booleans and null in an enum, parenthesising a negative in an array", () => {
    expect(jsonSchemaToType({ enum: [1, -1, true, null] })).toBe("1 | -1 | true | null");
    expect(jsonSchemaToType({ type: "array", items: { const: -1 } })).toBe("(-1)[]");
    expectErrorsOnMarkedLines(
      declareValue({ type: "array", items: { const: -1 } }),
      ["const ok: Value = [-1, -1];", "const other: Value = [1]; // error"].join("\n"),
    );
  });

  it("writes const as one literal, objects and arrays included", () => {
    expect(jsonSchemaToType({ const: "v1" })).toBe('"v1"');
    expect(jsonSchemaToType({ const: { kind: "a", "two words": [1, "x"] } })).toBe(
      '{ kind: "a"; "two words": [1, "x"] }',
    );
    expectErrorsOnMarkedLines(
      declareValue({ type: "object", properties: { version: { const: 2 } }, required: ["version"] }),
      ["const ok: Value = { version: 2 };", "const old: Value = { version: 1 }; // error"].join("\n"),
    );
  });

  it("escapes quotes and line breaks in string literals", () => {
    const quoted: JsonSchema = { enum: ['say "hi"', "two\nlines", "back\\slash"] };
    expectErrorsOnMarkedLines(
      declareValue(quoted),
      ["const ok: Value = 'say \"hi\"';", 'const other: Value = "say hi"; // error'].join("\n"),
    );
  });
});

describe("jsonSchemaToType: depth limit", () => {
  function nested(levels: number): JsonSchema {
    let schema: JsonSchema = { type: "string" };
    for (let level = 0; level < levels; level++)
      schema = { type: "object", properties: { inner: schema }, required: ["inner"] };
    return schema;
  }

  it("writes 8 levels of objects by default and unknown beyond them", () => {
    const eight = jsonSchemaToType(nested(8));
    expect(eight).toContain("inner: string");
    const ten = jsonSchemaToType(nested(10));
    expect(ten).not.toContain("string");
    expect(ten.match(/inner:/g)).toHaveLength(8);
    expect(ten).toContain("inner: unknown");
    expectErrorsOnMarkedLines(
      declareValue(nested(10)),
      [
        "const anything: Value = { inner: { inner: { inner: { inner: { inner: { inner: { inner: { inner: 42 } } } } } } } };",
        "const shallow: Value = { inner: 1 }; // error",
      ].join("\n"),
    );
  });

  it("takes another limit from maxDepth", () => {
    expect(jsonSchemaToType(nested(3), { maxDepth: 1 })).toBe("{ inner: unknown }");
    expect(
      jsonSchemaToType({ type: "array", items: { type: "array", items: { type: "string" } } }, { maxDepth: 1 }),
    ).toBe("unknown[]");
    expect(
      jsonSchemaToType({ type: "array", items: { type: "array", items: { type: "string" } } }, { maxDepth: 2 }),
    ).toBe("string[][]");
  });
});
