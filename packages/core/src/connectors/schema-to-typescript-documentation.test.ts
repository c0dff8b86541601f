import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./define-connector.js";
import { declareValue, documentationOf, expectCompiles } from "./schema-fixtures.js";
import { jsonSchemaToType } from "./schema-to-typescript.js";

describe("jsonSchemaToType: documentation", () => {
  const issue: JsonSchema = {
    type: "object",
    properties: {
      repo: { type: "string", description: "The repository as owner/name.\nFor example acme/web." },
      title: { type: "string", description: "Ends a comment */ if not escaped", minLength: 1, maxLength: 256 },
      due: { type: "string", format: "date-time" },
      count: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 },
      priority: { type: "integer", minimum: 1, maximum: 5, default: 3, deprecated: true },
    },
    required: ["repo", "title"],
  };

  it("writes descriptions as doc comments on their properties, escaping */, and still compiles", () => {
    const type = jsonSchemaToType(issue);
    expect(type).toContain(
      "/**\n   * The repository as owner/name.\n   * For example acme/web.\n   */\n  repo: string;",
    );
    expect(type).toContain("Ends a comment *\\/ if not escaped");
    expect(type).not.toContain("comment */");
    expectCompiles(declareValue(issue), 'const ok: Value = { repo: "a/b", title: "t" };');
  });

  it("shows the description and constraints where an editor shows a property's documentation", () => {
    const declarations = declareValue(issue);
    expect(documentationOf(declarations, "value.repo")).toBe("The repository as owner/name.\nFor example acme/web.");
    expect(documentationOf(declarations, "value.title")).toBe(
      "Ends a comment *\\/ if not escaped\n@minLength 1\n@maxLength 256",
    );
    expect(documentationOf(declarations, "value.due")).toBe("@format date-time");
    expect(documentationOf(declarations, "value.priority")).toBe("@minimum 1\n@maximum 5\n@default 3\n@deprecated");
  });

  it("leaves out the ±MAX_SAFE_INTEGER bounds zod writes for every integer", () => {
    expect(jsonSchemaToType(issue)).toContain("count?: number");
    expect(jsonSchemaToType(issue)).not.toContain("9007199254740991");
  });

  it("uses the title when there is no description", () => {
    expect(jsonSchemaToType({ type: "object", properties: { a: { type: "string", title: "The A" } } })).toContain(
      "/** The A */",
    );
  });
});
