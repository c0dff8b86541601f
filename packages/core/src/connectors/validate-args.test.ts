import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { StandardSchemaV1 } from "./define-connector.js";
import { type ArgsValidation, createArgsValidator, schemaProblems } from "./validate-args.js";

function failure(result: ArgsValidation): string {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.message;
}

const orderSchema = {
  type: "object",
  properties: {
    customer: { type: "string", minLength: 1 },
    priority: { enum: ["low", "normal", "high"] },
    items: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1, maximum: 100 } },
        required: ["sku", "quantity"],
        additionalProperties: false,
      },
    },
  },
  required: ["customer", "items"],
  additionalProperties: false,
};

const checkOrder = createArgsValidator("shop.place_order", { inputSchema: orderSchema });

describe("JSON Schema arguments (R-CON-2): what a problem says", () => {
  it("passes valid arguments through unchanged", async () => {
    const args = { customer: "acme", items: [{ sku: "A-1", quantity: 2 }] };
    expect(await checkOrder(args)).toEqual({ ok: true, value: args });
  });

  it("names the method and the exact field path of a wrong type and an out-of-range number", async () => {
    const message = failure(
      await checkOrder({
        customer: "acme",
        items: [
          { sku: "A-1", quantity: 1 },
          { sku: "B-2", quantity: 3 },
          { sku: "C-3", quantity: "2" },
        ],
      }),
    );
    expect(message).toBe(
      'Invalid arguments for shop.place_order:\n- args.items[2].quantity: expected an integer, got string "2"',
    );

    const tooMany = failure(await checkOrder({ customer: "acme", items: [{ sku: "A-1", quantity: 500 }] }));
    expect(tooMany).toContain("args.items[0].quantity: expected a number <= 100, got 500");
  });

  it("names a missing required property, the enum values and an unknown property with a suggestion", async () => {
    const message = failure(await checkOrder({ priority: "urgent", items: [{ sku: "A-1", quantity: 1, quantty: 2 }] }));
    expect(message).toContain("- args.customer: missing required property");
    expect(message).toContain('- args.priority: expected "low", "normal" or "high", got "urgent"');
    expect(message).toContain(
      '- args.items[0].quantty: property not allowed (did you mean "quantity"? allowed: sku, quantity)',
    );
  });

  it("reports min length and min items", async () => {
    const message = failure(await checkOrder({ customer: "", items: [] }));
    expect(message).toContain("- args.customer: expected at least 1 character, got 0");
    expect(message).toContain("- args.items: expected at least 1 item, got 0");
  });

  it("lists at most five problems and counts the rest", async () => {
    const items = Array.from({ length: 8 }, () => ({ sku: 1, quantity: 1 }));
    const message = failure(await checkOrder({ customer: "acme", items }));
    const lines = message.split("\n");
    expect(lines[0]).toBe("Invalid arguments for shop.place_order:");
    expect(lines.slice(1, 6)).toEqual(
      [0, 1, 2, 3, 4].map((index) => `- args.items[${index}].sku: expected string, got number 1`),
    );
    expect(lines[6]).toBe("- and 3 more");
    expect(lines).toHaveLength(7);
  });

  it("quotes keys that are not identifiers the way the model's code would write them", async () => {
    const headers = createArgsValidator("http.request", {
      inputSchema: {
        type: "object",
        properties: { headers: { type: "object", additionalProperties: { type: "string" } } },
      },
    });
    expect(failure(await headers({ headers: { "content-type": 5 } }))).toContain(
      'args.headers["content-type"]: expected string, got number 5',
    );
  });
});

describe("JSON Schema arguments (R-CON-2): the keywords and drafts it reads", () => {
  it("merges alternatives into one expectation and follows the branch whose discriminator matched", async () => {
    const union = createArgsValidator("notes.tag", {
      inputSchema: { type: "object", properties: { tag: { anyOf: [{ type: "string" }, { type: "number" }] } } },
    });
    expect(failure(await union({ tag: true }))).toBe(
      "Invalid arguments for notes.tag:\n- args.tag: expected string or number, got boolean",
    );

    const payment = createArgsValidator("payments.pay", {
      inputSchema: {
        type: "object",
        properties: {
          method: {
            oneOf: [
              {
                type: "object",
                properties: { kind: { const: "card" }, number: { type: "string" } },
                required: ["kind", "number"],
              },
              {
                type: "object",
                properties: { kind: { const: "bank" }, iban: { type: "string" } },
                required: ["kind", "iban"],
              },
            ],
          },
        },
      },
    });
    expect(failure(await payment({ method: { kind: "bank" } }))).toBe(
      "Invalid arguments for payments.pay:\n- args.method.iban: missing required property",
    );
  });

  it("checks formats", async () => {
    const invite = createArgsValidator("calendar.invite", {
      inputSchema: { type: "object", properties: { email: { type: "string", format: "email" } } },
    });
    expect(failure(await invite({ email: "not-an-email" }))).toContain(
      'args.email: expected a string in format "email", got "not-an-email"',
    );
    expect((await invite({ email: "ada@example.com" })).ok).toBe(true);
  });

  it("reads draft 2020-12 schemas, with $defs and prefixItems", async () => {
    const check2020 = createArgsValidator("geo.route", {
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { from: { $ref: "#/$defs/point" } },
        $defs: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } },
      },
    });
    expect((await check2020({ from: [1, 2] })).ok).toBe(true);
    expect(failure(await check2020({ from: [1, "2"] }))).toContain("args.from[1]: expected number, got string");
    expect(failure(await check2020({ from: [1, 2, 3] }))).toContain("args.from: expected at most 2 items, got 3");
  });

  it("reads draft-07 schemas with definitions and tolerates vendor keywords", async () => {
    const check07 = createArgsValidator("crm.lookup", {
      inputSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        "x-vendor-hint": { ui: "hidden" },
        properties: { id: { $ref: "#/definitions/id", "x-display": "ID" } },
        definitions: { id: { type: "string", pattern: "^C[0-9]+$" } },
      },
    });
    expect((await check07({ id: "C42" })).ok).toBe(true);
    expect(failure(await check07({ id: "42" }))).toContain('args.id: expected a string matching /^C[0-9]+$/, got "42"');
  });
});

describe("JSON Schema arguments (R-CON-2): a missing argument or schema, and compiling once", () => {
  it("treats a missing argument as {} for an object schema", async () => {
    const listRepos = createArgsValidator("github.list_repos", {
      inputSchema: { type: "object", properties: { org: { type: "string" } } },
    });
    expect(await listRepos(undefined)).toEqual({ ok: true, value: {} });
    expect(failure(await checkOrder(undefined))).toContain("args.customer: missing required property");
  });

  it("lets everything through when the tool has no inputSchema", async () => {
    const open = createArgsValidator("misc.anything", {});
    expect(await open(undefined)).toEqual({ ok: true, value: undefined });
    expect(await open({ any: ["thing"] })).toEqual({ ok: true, value: { any: ["thing"] } });
  });

  it("compiles a schema once however many validators use it", async () => {
    const schema = { type: "object", properties: { n: { type: "number" } } };
    const first = createArgsValidator("a.one", { inputSchema: schema });
    const second = createArgsValidator("a.two", { inputSchema: schema });
    expect((await first({ n: 1 })).ok).toBe(true);
    expect(failure(await second({ n: "1" }))).toBe(
      'Invalid arguments for a.two:\n- args.n: expected number, got string "1"',
    );
  });
});

describe("Standard Schema arguments", () => {
  it("reports zod issues with the exact field path", async () => {
    const check = createArgsValidator("shop.place_order", {
      inputSchema: z.object({
        customer: z.string(),
        items: z.array(z.object({ sku: z.string(), quantity: z.number().int().min(1) })),
      }),
    });
    const message = failure(
      await check({
        customer: 7,
        items: [
          { sku: "A", quantity: 1 },
          { sku: "B", quantity: 1 },
          { sku: "C", quantity: 0 },
        ],
      }),
    );
    expect(message.split("\n")[0]).toBe("Invalid arguments for shop.place_order:");
    expect(message).toMatch(/- args\.customer: .*expected string/);
    expect(message).toMatch(/- args\.items\[2\]\.quantity: .*>=1/);
  });

  it("hands execute the transformed value, with defaults applied", async () => {
    const check = createArgsValidator("calendar.create_event", {
      inputSchema: z.object({
        title: z.string().trim(),
        start: z.string().transform((text) => new Date(text).toISOString()),
        durationMinutes: z.number().default(30),
      }),
    });
    expect(await check({ title: "  Standup ", start: "2025-03-01T09:00:00Z" })).toEqual({
      ok: true,
      value: { title: "Standup", start: "2025-03-01T09:00:00.000Z", durationMinutes: 30 },
    });
  });

  it("awaits an asynchronous Standard Schema", async () => {
    const known = new Set(["acme", "globex"]);
    const customerId: StandardSchemaV1<unknown, { customer: string }> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: async (value) => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          const customer = (value as { customer?: unknown } | undefined)?.customer;
          if (typeof customer === "string" && known.has(customer))
            return { value: { customer: customer.toUpperCase() } };
          return { issues: [{ message: "unknown customer", path: [{ key: "customer" }] }] };
        },
      },
    };
    const check = createArgsValidator("crm.get_customer", { inputSchema: customerId });
    expect(await check({ customer: "acme" })).toEqual({ ok: true, value: { customer: "ACME" } });
    expect(failure(await check({ customer: "initech" }))).toBe(
      "Invalid arguments for crm.get_customer:\n- args.customer: unknown customer",
    );
  });

  it("works with zod async refinements", async () => {
    const check = createArgsValidator("files.upload", {
      inputSchema: z.object({
        name: z.string().refine(async (name) => !name.includes("/"), "must not contain a slash"),
      }),
    });
    expect((await check({ name: "report.pdf" })).ok).toBe(true);
    expect(failure(await check({ name: "a/b.pdf" }))).toContain("- args.name: must not contain a slash");
  });
});

describe("schemaProblems", () => {
  it("is empty for schemas that compile, Standard Schemas and tools without a schema", () => {
    expect(schemaProblems("shop.place_order", { inputSchema: orderSchema })).toEqual([]);
    expect(schemaProblems("shop.place_order", { inputSchema: z.object({ a: z.string() }) })).toEqual([]);
    expect(schemaProblems("shop.ping", {})).toEqual([]);
  });

  it("names the tool whose schema does not compile", async () => {
    const broken = { type: "object", properties: { title: { type: "strnig" } } };
    const problems = schemaProblems("github.create_issue", { inputSchema: broken });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^tool "github\.create_issue" has an inputSchema that does not compile: /);

    const unresolved = schemaProblems("github.get_issue", {
      inputSchema: { type: "object", properties: { id: { $ref: "#/definitions/missing" } } },
    });
    expect(unresolved[0]).toContain("github.get_issue");

    // Called anyway, the validator refuses rather than letting unchecked arguments through.
    const check = createArgsValidator("github.create_issue", { inputSchema: broken });
    expect(failure(await check({ title: "x" }))).toMatch(
      /^github\.create_issue cannot be called: its inputSchema does not compile/,
    );
  });

  it("rejects an inputSchema that is not a schema at all", () => {
    expect(schemaProblems("github.create_issue", { inputSchema: "string" as never })).toEqual([
      'tool "github.create_issue" has an inputSchema that is neither a JSON Schema object nor a Standard Schema',
    ]);
  });
});
