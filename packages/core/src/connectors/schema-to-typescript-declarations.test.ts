import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineConnector, type JsonSchema, type StandardSchemaV1, type ToolDefinition } from "./define-connector.js";
import { expectCompiles, expectErrorsOnMarkedLines } from "./schema-fixtures.js";
import {
  CODEMODE_DECLARATION,
  connectorDeclaration,
  runtimeDeclarations,
  toolDeclaration,
} from "./schema-to-typescript.js";

function tool(definition: Omit<ToolDefinition, "execute">): ToolDefinition {
  return { ...definition, execute: () => undefined };
}

/** The program's lines marked `// error` fail against `declarations`, the others compile. */
function expectMarkedErrors(declarations: string, programLines: string[]): void {
  expectErrorsOnMarkedLines(declarations, programLines.join("\n"));
}

/** One method's declaration inside its connector's global, as the model would see it. */
function declareMethod(connectorName: string, methodName: string, definition: ToolDefinition): string {
  return connectorDeclaration(defineConnector({ name: connectorName, tools: { [methodName]: definition } }));
}

const createIssue = tool({
  description: "Create an issue.",
  inputSchema: {
    type: "object",
    properties: {
      repo: { type: "string", description: "owner/name" },
      title: { type: "string" },
      labels: { type: "array", items: { type: "string", enum: ["bug", "feature"] } },
    },
    required: ["repo", "title"],
  },
  outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
});

describe("toolDeclaration", () => {
  it("declares a method from inputSchema and outputSchema with its description", () => {
    const short = tool({
      description: "Create an issue.",
      inputSchema: {
        type: "object",
        properties: { repo: { type: "string" }, title: { type: "string" } },
        required: ["repo", "title"],
      },
      outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
    });
    expect(toolDeclaration("github", "create_issue", short)).toBe(
      "/** Create an issue. */\ncreate_issue(args: { repo: string; title: string }): Promise<{ number: number }>;",
    );
  });

  it("accepts a correct call and rejects a wrong property type, a missing property and a wrong enum literal", () => {
    expectMarkedErrors(declareMethod("github", "create_issue", createIssue), [
      'github.create_issue({ repo: "a", title: "b" }).then((issue) => issue.number.toFixed());',
      'github.create_issue({ repo: "a", title: "b", labels: ["bug"] });',
      'github.create_issue({ repo: "a", title: 7 }); // error',
      'github.create_issue({ repo: "a" }); // error',
      'github.create_issue({ repo: "a", title: "b", labels: ["question"] }); // error',
      'github.create_issue({ repo: "a", title: "b" }).then((issue) => issue.title); // error',
      "github.delete_repo({}); // error",
    ]);
  });

  it("tells in the doc comment that a call needs approval", () => {
    const approved = toolDeclaration("github", "create_issue", { ...createIssue, requiresApproval: true });
    expect(approved).toContain("Needs approval");
    const sometimes = toolDeclaration("github", "create_issue", { ...createIssue, requiresApproval: () => true });
    expect(sometimes).toContain("May need approval");
    expect(toolDeclaration("github", "create_issue", createIssue)).not.toContain("approval");
  });

  it("takes any object argument and an unknown result when the tool has no schemas", () => {
    const bare = tool({ description: "Ping." });
    expect(toolDeclaration("health", "ping", bare)).toBe(
      "/** Ping. */\nping(args?: { [key: string]: unknown }): Promise<unknown>;",
    );
    expectMarkedErrors(declareMethod("health", "ping", bare), [
      "health.ping();",
      "health.ping({ verbose: true }).then((result) => String(result));",
      "health.ping().then((result) => result.ok); // error",
    ]);
  });

  it("lets a call leave out an argument whose properties are all optional", () => {
    const list = tool({ inputSchema: { type: "object", properties: { state: { enum: ["open", "closed"] } } } });
    expectMarkedErrors(declareMethod("github", "list_issues", list), [
      "github.list_issues();",
      'github.list_issues({ state: "open" });',
      'github.list_issues({ state: "all" }); // error',
    ]);
  });

  it("declares a recursive input through its connector's namespace", () => {
    const walk = tool({
      inputSchema: {
        $ref: "#/$defs/Folder",
        $defs: {
          Folder: {
            type: "object",
            properties: { name: { type: "string" }, folders: { type: "array", items: { $ref: "#/$defs/Folder" } } },
            required: ["name"],
          },
        },
      },
    });
    const namedTypes = new Map<string, string>();
    expect(toolDeclaration("files", "walk", walk, { namedTypes })).toBe("walk(args: files.Folder): Promise<unknown>;");
    expect(namedTypes.get("Folder")).toBe("{ name: string; folders?: Folder[] }");
    expectMarkedErrors(declareMethod("files", "walk", walk), [
      'files.walk({ name: "a", folders: [{ name: "b", folders: [] }] });',
      'files.walk({ name: "a", folders: [{ folders: [] }] }); // error',
    ]);
  });
});

describe("toolDeclaration: Standard Schema inputs", () => {
  const zodIssue = tool({
    description: "Create an issue.",
    inputSchema: z.object({
      repo: z.string().describe("owner/name"),
      title: z.string().min(1),
      priority: z.enum(["low", "high"]).optional(),
      due: z.string().datetime().nullable().optional(),
    }),
    outputSchema: z.object({ number: z.number().int(), labels: z.array(z.string()) }),
  });

  it("uses zod's JSON Schema (Standard JSON Schema) for input and output", () => {
    const declaration = toolDeclaration("github", "create_issue", zodIssue);
    expect(declaration).toContain("repo: string");
    expect(declaration).toContain('priority?: "low" | "high"');
    expect(declaration).toContain("Promise<{ number: number; labels: string[] }>");
    expect(declaration).toContain("/** owner/name */");
    expectMarkedErrors(declareMethod("github", "create_issue", zodIssue), [
      'github.create_issue({ repo: "a", title: "b" }).then((issue) => issue.number.toFixed() + issue.labels.join());',
      'github.create_issue({ repo: "a", title: "b", priority: "high", due: null });',
      'github.create_issue({ repo: "a", title: 1 }); // error',
      'github.create_issue({ title: "b" }); // error',
      'github.create_issue({ repo: "a", title: "b", priority: "urgent" }); // error',
    ]);
  });

  it("writes zod's input type for the argument and its output type for the result", () => {
    const defaults = tool({
      inputSchema: z.object({ page: z.number().default(1) }),
      outputSchema: z.object({ page: z.number().default(1) }),
    });
    const declaration = toolDeclaration("api", "list", defaults);
    expect(declaration).toBe(
      "list(args?: {\n  /** @default 1 */\n  page?: number;\n}): Promise<{\n  /** @default 1 */\n  page: number;\n}>;",
    );
  });

  it("declares zod's recursive schemas by name", () => {
    const Category: z.ZodType<{ name: string; children: { name: string; children: unknown[] }[] }> = z.object({
      name: z.string(),
      get children() {
        return z.array(Category);
      },
    });
    const classify = tool({ inputSchema: z.object({ primary: Category, secondary: Category.optional() }) });
    const declarations = declareMethod("shop", "classify", classify);
    expect(declarations).toContain("declare namespace shop {");
    expectMarkedErrors(declarations, [
      'shop.classify({ primary: { name: "a", children: [{ name: "b", children: [] }] } });',
      'shop.classify({ primary: { name: "a", children: [{ name: 2, children: [] }] } }); // error',
    ]);
    const Comment: z.ZodType = z.lazy(() => z.object({ text: z.string(), replies: z.array(Comment) }));
    const reply = toolDeclaration("forum", "reply", tool({ inputSchema: Comment }), { namedTypes: new Map() });
    expect(reply).toBe("reply(args: forum.ReplyArgs): Promise<unknown>;");
  });

  it("writes unknown for a zod schema JSON Schema cannot express", () => {
    const dated = tool({ inputSchema: z.object({ when: z.date() }) });
    expect(toolDeclaration("calendar", "book", dated)).toBe("book(args?: unknown): Promise<unknown>;");
  });

  it("asks convertStandardSchema first, falls back when it fails, and writes unknown when nothing converts", () => {
    const handMade: StandardSchemaV1 = {
      "~standard": { version: 1, vendor: "hand-made", validate: (value) => ({ value }) },
    };
    const converted = toolDeclaration("api", "send", tool({ inputSchema: handMade }), {
      convertStandardSchema: (schema, direction) =>
        schema["~standard"].vendor === "hand-made" && direction === "input"
          ? { type: "object", properties: { to: { type: "string" } }, required: ["to"] }
          : undefined,
    });
    expect(converted).toBe("send(args: { to: string }): Promise<unknown>;");
    expect(toolDeclaration("api", "send", tool({ inputSchema: handMade, outputSchema: handMade }))).toBe(
      "send(args?: unknown): Promise<unknown>;",
    );
    const failing = toolDeclaration("api", "send", tool({ inputSchema: z.object({ to: z.string() }) }), {
      convertStandardSchema: () => {
        throw new Error("not this one");
      },
    });
    expect(failing).toBe("send(args: { to: string }): Promise<unknown>;");
  });
});

describe("connectorDeclaration and runtimeDeclarations", () => {
  const folderSchema = (property: string): JsonSchema => ({
    $ref: "#/$defs/Node",
    $defs: {
      Node: {
        type: "object",
        properties: { [property]: { type: "string" }, nodes: { type: "array", items: { $ref: "#/$defs/Node" } } },
        required: [property],
      },
    },
  });
  const github = defineConnector({
    name: "github",
    instructions: "Use for GitHub issues and pull requests.",
    tools: {
      create_issue: { ...createIssue, requiresApproval: true },
      tree: tool({ inputSchema: folderSchema("path"), outputSchema: folderSchema("path") }),
      labels: tool({ inputSchema: folderSchema("label") }),
    },
  });
  const drive = defineConnector({
    name: "drive",
    tools: { tree: tool({ inputSchema: folderSchema("fileId") }) },
  });

  it("declares the connector global with its instructions as the doc comment", () => {
    const declaration = connectorDeclaration(github);
    expect(declaration).toContain("/** Use for GitHub issues and pull requests. */\ndeclare const github: {\n");
    expect(declaration).toContain("  create_issue(args: {");
    expect(declaration).toContain("declare namespace github {\n  type Node = ");
    expect(declaration).toContain("  type Node2 = ");
    expectMarkedErrors(declaration, [
      'github.tree({ path: "/" }).then((node) => node.nodes?.[0]?.path.toUpperCase());',
      'github.labels({ label: "bug", nodes: [{ label: "ui" }] });',
      'github.labels({ path: "/" }); // error',
    ]);
  });

  it("declares only the methods asked for", () => {
    const declaration = connectorDeclaration(github, { methods: ["create_issue"] });
    expect(declaration).not.toContain("tree(");
    expect(declaration).not.toContain("namespace");
    expectCompiles(declaration, 'github.create_issue({ repo: "a", title: "b" });');
  });

  it("declares a connector without tools as an empty object", () => {
    const empty = defineConnector({ name: "nothing", tools: {} });
    expect(connectorDeclaration(empty)).toBe("declare const nothing: {};");
  });

  it("declares every connector and codemode so that a whole program type-checks", () => {
    const declarations = runtimeDeclarations([github, drive]);
    expect(declarations.endsWith(CODEMODE_DECLARATION)).toBe(true);
    expectMarkedErrors(declarations, [
      "async function main() {",
      '  const found = await codemode.search("open issues");',
      "  const first = found.results[0];",
      "  if (first !== undefined && !first.requiresApproval) await codemode.describe(first.path).then((described) => ('declaration' in described ? described.declaration.trim() : described));",
      '  const stamp = await codemode.step("stamp", () => Date.now());',
      '  const later = await codemode.step("later", async () => "x");',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: test data, the model's program source holds its own template literal
      '  const issue = await github.create_issue({ repo: "acme/web", title: `Triage at ${stamp.toFixed()} ${later.toUpperCase()}` });',
      '  await drive.tree({ fileId: "root", nodes: [{ fileId: "child" }] });',
      '  await codemode.run("triage", { issue: issue.number });',
      '  await codemode.run("triage");',
      "  await codemode.search(42); // error",
      '  await drive.tree({ path: "/" }); // error',
      "  stamp.toUpperCase(); // error",
      "}",
    ]);
  });
});
