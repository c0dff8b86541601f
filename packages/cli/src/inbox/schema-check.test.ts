import { describe, expect, it } from "vitest";
import { SCHEMA_CHECK_SOURCE, schemaCheckLinearPattern, schemaProblems } from "./schema-check.js";

const ORDER = {
  type: "object",
  properties: {
    sku: { type: "string", minLength: 2, maxLength: 8, pattern: "^[a-z]+$" },
    qty: { type: "integer", minimum: 1, maximum: 10 },
    speed: { enum: ["standard", "express"] },
    address: {
      type: "object",
      properties: { city: { type: "string" }, zip: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
    lines: {
      type: "array",
      minItems: 1,
      maxItems: 2,
      items: { type: "object", properties: { n: { type: "number", exclusiveMinimum: 0 } }, required: ["n"] },
    },
  },
  required: ["sku", "qty"],
  additionalProperties: false,
};

describe("the edit form's schema check (R-AP-9)", () => {
  it("finds nothing wrong with arguments that fit", () => {
    expect(
      schemaProblems({ sku: "mug", qty: 2, speed: "express", address: { city: "Oslo" }, lines: [{ n: 1.5 }] }, ORDER),
    ).toEqual([]);
  });

  it("names each problem and where: required, types, enum, bounds, lengths, pattern, extra properties, nested objects and arrays", () => {
    expect(
      schemaProblems(
        {
          sku: "M",
          qty: 10.5,
          speed: "now",
          address: { zip: 1, street: "x" },
          lines: [{ n: 0 }, {}, { n: 1 }],
          gift: true,
        },
        ORDER,
      ),
    ).toEqual([
      "sku must be at least 2 characters long",
      "sku must match the pattern ^[a-z]+$",
      "qty must be a whole number",
      'speed must be one of "standard", "express"',
      "address.city is required",
      "address.zip must be a string",
      "address.street is not allowed (the tool takes no such property)",
      "lines must have at most 2 items",
      "lines[0].n must be greater than 0",
      "lines[1].n is required",
      "gift is not allowed (the tool takes no such property)",
    ]);
    expect(schemaProblems({ qty: 0 }, ORDER)).toEqual(["sku is required", "qty must be at least 1"]);
    expect(schemaProblems({ sku: "toolongname", qty: 11 }, ORDER)).toEqual([
      "sku must be at most 8 characters long",
      "qty must be at most 10",
    ]);
    expect(schemaProblems([1], ORDER)).toEqual(["the arguments must be an object"]);
    expect(schemaProblems({ "odd key": 1 }, { type: "object", additionalProperties: false })).toEqual([
      '["odd key"] is not allowed (the tool takes no such property)',
    ]);
  });

  it("follows local $refs and anyOf / oneOf / allOf; stops at its limit", () => {
    const schema = {
      $defs: { positive: { type: "number", minimum: 0 } },
      type: "object",
      properties: { amount: { $ref: "#/$defs/positive" }, id: { anyOf: [{ type: "string" }, { type: "integer" }] } },
    };
    expect(schemaProblems({ amount: -1, id: true }, schema)).toEqual([
      "amount must be at least 0",
      "id fits none of the shapes the tool takes",
    ]);
    expect(schemaProblems({ a: 1, b: 1, c: 1 }, { additionalProperties: false }, 2)).toHaveLength(2);
  });

  it("its source stands alone, as the page's script runs it", () => {
    const standalone = new Function(`${SCHEMA_CHECK_SOURCE}\nreturn schemaProblems;`)() as typeof schemaProblems;
    expect(standalone({ qty: 0, extra: 1 }, ORDER)).toEqual(schemaProblems({ qty: 0, extra: 1 }, ORDER));
    expect(standalone({ qty: 0, extra: 1 }, ORDER)).toHaveLength(3);
  });
});

describe("patterns the page checks itself, and those it leaves to the runtime", () => {
  it("checks anchored patterns with at most one variable quantifier; leaves any that could backtrack to the runtime", () => {
    for (const safe of ["^[a-z0-9-]+$", "^[A-Z]{3}-[0-9]{4}$", "^\\d{3}-\\d{2,4}$", "^v\\d\\.\\d$"])
      expect(schemaCheckLinearPattern(safe), safe).toBe(true);
    for (const unsafe of ["^(a+)+$", "^(a|a)*$", "a*a*a*a*b", "^a?a?a?a?aaaa$", "[a-z]+x", "^(.)\\1$", "^a{1,}b{2,}$"])
      expect(schemaCheckLinearPattern(unsafe), unsafe).toBe(false);
  });

  it("a hostile pattern is not run in the page: a value 100,000 characters long against ^(a+)+$ is left to the runtime", () => {
    const schema = { type: "object", properties: { name: { type: "string", pattern: "^(a+)+$" } } };
    // Backtracking on it would not end within the test's timeout; left to the runtime, it is not run here.
    expect(schemaProblems({ name: `${"a".repeat(100_000)}!` }, schema)).toEqual([]);
    // A safe pattern is still checked.
    expect(schemaProblems({ sku: "Mug!" }, { properties: { sku: { type: "string", pattern: "^[a-z]+$" } } })).toEqual([
      "sku must match the pattern ^[a-z]+$",
    ]);
  });
});
