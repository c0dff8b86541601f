/**
 * R-CN-OA, R-AI-2: a well-known public OpenAPI document of 167 operations (Asana's, OpenAPI 3.0;
 * test/openapi/public/README.md says where it comes from) becomes a connector whose line in the
 * model's description costs what any connector's does, and whose methods describe and validate
 * with 3.0's rules (`nullable`) read as JSON Schema says them.
 */
import { readFileSync } from "node:fs";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { modelDescription } from "@codemode/core/adapters";
import { openApiConnector } from "@codemode/core/openapi";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";

const ASANA = readFileSync(new URL("./openapi/public/asana.json", import.meta.url), "utf8");

describe("R-CN-OA a public document of 100+ operations", () => {
  it("R-CN-OA R-AI-2 loads every operation, and its line in the description stays within a connector's 20 tokens", async () => {
    const asana = openApiConnector({ name: "asana", spec: ASANA });
    expect(Object.keys(asana.tools)).toHaveLength(167);
    expect(Object.keys(asana.tools).slice(0, 3)).toEqual([
      "getAttachmentsForObject",
      "createAttachmentForObject",
      "getAttachment",
    ]);
    const github = defineConnector({
      name: "github",
      tools: { list_issues: { execute: () => [] }, create_issue: { execute: () => ({}) } },
    });
    const one = countTokens(modelDescription([github]));
    const both = countTokens(modelDescription([github, asana]));
    expect(both - one).toBeLessThanOrEqual(20);
    expect(countTokens(modelDescription([asana]))).toBeLessThanOrEqual(600);

    // Reads are read-only, the rest pause; describe gives one method's TypeScript.
    expect(asana.tools.getTask?.readOnly).toBe(true);
    expect(asana.tools.createTask?.requiresApproval).toBe(true);
    const runtime = createCodemodeRuntime({ connectors: [asana] });
    try {
      const described = await runtime.describe("asana.getTask");
      expect(described.kind).toBe("method");
      if (described.kind === "method") {
        expect(described.declaration).toContain("getTask(args: {");
        expect(described.declaration).toContain("task_gid: string;");
      }
      const found = await runtime.search("add a follower to a task");
      expect(found.results.slice(0, 5).map((result) => result.path)).toContain("asana.addFollowersForTask");
    } finally {
      await runtime.close();
    }
  });

  it("R-CN-OA 3.0's nullable admits null in validation and in the generated type", async () => {
    const spec = {
      openapi: "3.0.3",
      info: { title: "Notes" },
      servers: [{ url: "http://127.0.0.1:9" }],
      paths: {
        "/notes/{id}": {
          put: {
            operationId: "putNote",
            parameters: [
              {
                name: "id",
                in: "path",
                required: true,
                schema: { type: "integer", minimum: 0, exclusiveMinimum: true },
              },
            ],
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["id", "text"],
                    properties: { id: { type: "integer", readOnly: true }, text: { type: "string", nullable: true } },
                  },
                },
              },
            },
            responses: { 204: { description: "stored" } },
          },
        },
      },
    };
    const notes = openApiConnector({
      name: "notes",
      spec,
      approval: "never",
      fetch: async () => new Response(null, { status: 204 }),
    });
    const runtime = createCodemodeRuntime({ connectors: [notes] });
    try {
      const outcome = await runtime.execute({
        code: `async () => {
          const stored = await notes.putNote({ id: 1, body: { text: null } });
          let zero; try { await notes.putNote({ id: 0, body: { text: "x" } }); } catch (error) { zero = error.message; }
          return { stored, zero };
        }`,
      });
      expect(outcome).toMatchObject({
        status: "completed",
        result: { stored: null, zero: "Invalid arguments for notes.putNote:\n- args.id: expected a number > 0, got 0" },
      });
      const described = await runtime.describe("notes.putNote");
      expect(described.kind === "method" && described.declaration).toContain(
        "body: { id?: number; text: string | null };",
      );
    } finally {
      await runtime.close();
    }
  });
});
