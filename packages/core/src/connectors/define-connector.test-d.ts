// Type-level tests: checked by tsc (vitest typecheck), never run. They pin what the types infer
// today: a tool's `args` come from an annotation (or the ToolDefinition's type argument), not
// from its inputSchema, which is checked at run time.
import { describe, expectTypeOf, test } from "vitest";
import * as z from "zod";
import {
  type Connector,
  defineConnector,
  type StandardSchemaV1,
  type ToolContext,
  type ToolDefinition,
} from "./define-connector.js";

const issueSchema = z.object({ repo: z.string(), title: z.string() });

describe("defineConnector", () => {
  test("an unannotated execute gets an untyped argument record and the tool context", () => {
    defineConnector({
      name: "github",
      tools: {
        create_issue: {
          inputSchema: issueSchema,
          execute: async (args, ctx) => {
            // The zod schema does not type args: they are checked at run time, before execute.
            expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
            expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
            expectTypeOf(ctx.idempotencyKey).toBeString();
            expectTypeOf(ctx.executionId).toBeString();
            expectTypeOf(ctx.seq).toBeNumber();
            return { number: 1 };
          },
        },
      },
    });
  });

  test("a zod schema is a Standard Schema inputSchema and outputSchema", () => {
    expectTypeOf(issueSchema).toExtend<StandardSchemaV1>();
    expectTypeOf(issueSchema).toExtend<NonNullable<ToolDefinition["inputSchema"]>>();
    expectTypeOf(issueSchema).toExtend<NonNullable<ToolDefinition["outputSchema"]>>();
  });

  test("an execute annotated with narrower args is accepted, and so is its requiresApproval", () => {
    defineConnector({
      name: "github",
      tools: {
        create_issue: {
          requiresApproval: (args: { repo: string }) => args.repo.startsWith("prod/"),
          execute: async (args: { repo: string; title: string }) => ({ repo: args.repo, title: args.title }),
        },
      },
    });
  });

  test("requiresApproval is a boolean or a function of the arguments", () => {
    expectTypeOf<ToolDefinition["requiresApproval"]>().toExtend<
      boolean | ((args: Record<string, unknown>) => boolean) | undefined
    >();
    defineConnector({
      name: "payments",
      tools: {
        refund: { requiresApproval: true, execute: async () => "ok" },
        charge: {
          requiresApproval: (args) => {
            expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
            return Number(args.amount) > 100;
          },
          execute: async () => "ok",
        },
        // @ts-expect-error requiresApproval decides with a boolean, not a string
        lookup: { requiresApproval: "yes", execute: async () => "ok" },
      },
    });
  });

  test("a misspelled option is an error", () => {
    defineConnector({
      name: "github",
      tools: {
        create_issue: {
          // @ts-expect-error the option is requiresApproval
          requireApproval: true,
          execute: async () => "ok",
        },
      },
    });
    // @ts-expect-error the connector option is instructions
    defineConnector({ name: "github", instruction: "Use for issues.", tools: {} });
  });

  test("replay and onInterrupted take only their listed policies", () => {
    defineConnector({
      name: "github",
      tools: {
        list_issues: { replay: "reexecute", onInterrupted: "ask", execute: async () => [] },
        // @ts-expect-error replay is "record" or "reexecute"
        get_issue: { replay: "always", execute: async () => ({}) },
        // @ts-expect-error onInterrupted is "rerun" or "ask"
        close_issue: { onInterrupted: "retry", execute: async () => ({}) },
      },
    });
  });

  test("a tool needs an execute", () => {
    defineConnector({
      name: "github",
      tools: {
        // @ts-expect-error execute is required
        create_issue: { description: "Create an issue." },
      },
    });
  });

  test("returns a Connector tagged by its kind", () => {
    const connector = defineConnector({ name: "github", tools: {} });
    expectTypeOf(connector).toEqualTypeOf<Connector>();
    expectTypeOf(connector.kind).toEqualTypeOf<"codemode-connector">();
    // @ts-expect-error kind is readonly
    connector.kind = "codemode-connector";
  });
});

describe("ToolDefinition", () => {
  test("its type arguments type execute, requiresApproval and revert", () => {
    const createIssue: ToolDefinition<{ repo: string; title: string }, { number: number }> = {
      requiresApproval: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ repo: string; title: string }>();
        return true;
      },
      execute: async (args) => {
        expectTypeOf(args.repo).toBeString();
        return { number: 1 };
      },
      revert: async (args, result, ctx) => {
        expectTypeOf(args).toEqualTypeOf<{ repo: string; title: string }>();
        expectTypeOf(result).toEqualTypeOf<{ number: number }>();
        expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
      },
    };
    expectTypeOf(createIssue.execute).returns.toEqualTypeOf<Promise<{ number: number }> | { number: number }>();
  });

  test("a tool with narrower argument types still fits a connector's tools", () => {
    expectTypeOf<ToolDefinition<{ repo: string }, { number: number }>>().toExtend<ToolDefinition>();
  });

  test("execute must return the declared result", () => {
    const wrongResult: ToolDefinition<{ repo: string }, { number: number }> = {
      // @ts-expect-error the result must be { number: number }
      execute: async () => ({ number: "one" }),
    };
    void wrongResult;
  });
});
