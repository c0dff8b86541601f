// Type-level tests: checked by tsc (vitest typecheck), never run.
import { describe, expectTypeOf, test } from "vitest";
import {
  type ErrorCode,
  type ErrorOutcome,
  errorOutcome,
  type LogEntry,
  type Outcome,
  type PendingAction,
} from "./outcome.js";

declare const outcome: Outcome;

describe("Outcome narrows on status", () => {
  test("completed carries the result, and nothing pending or failed", () => {
    if (outcome.status === "completed") {
      expectTypeOf(outcome.result).toBeUnknown();
      expectTypeOf(outcome.executionId).toBeString();
      expectTypeOf(outcome).not.toHaveProperty("pending");
      expectTypeOf(outcome).not.toHaveProperty("code");
    }
  });

  test("paused lists the pending actions awaiting approval", () => {
    if (outcome.status === "paused") {
      expectTypeOf(outcome.pending).toEqualTypeOf<PendingAction[]>();
      expectTypeOf(outcome).not.toHaveProperty("result");
    }
  });

  test("error names one of the listed codes and says why", () => {
    if (outcome.status === "error") {
      expectTypeOf(outcome.code).toEqualTypeOf<ErrorCode>();
      expectTypeOf(outcome.error).toBeString();
      expectTypeOf(outcome).toEqualTypeOf<ErrorOutcome>();
      expectTypeOf(outcome).not.toHaveProperty("result");
    }
  });

  test("every status carries the calls and logs, so they need no narrowing", () => {
    expectTypeOf(outcome.calls).toEqualTypeOf<LogEntry[] | undefined>();
    expectTypeOf(outcome.logs).toEqualTypeOf<string[] | undefined>();
    expectTypeOf(outcome.status).toEqualTypeOf<"completed" | "paused" | "error">();
  });

  test("the result, the pending actions and the code need narrowing first", () => {
    // @ts-expect-error result exists only on a completed outcome
    void outcome.result;
    // @ts-expect-error pending exists only on a paused outcome
    void outcome.pending;
    // @ts-expect-error code exists only on an error outcome
    void outcome.code;
  });

  test("a switch over status is exhaustive", () => {
    const describeOutcome = (value: Outcome): string => {
      switch (value.status) {
        case "completed":
          return "done";
        case "paused":
          return `waiting on ${value.pending.length}`;
        case "error":
          return value.code;
        default:
          expectTypeOf(value).toBeNever();
          return value;
      }
    };
    expectTypeOf(describeOutcome).returns.toBeString();
  });
});

describe("errorOutcome", () => {
  test("takes only listed codes and returns an error outcome", () => {
    expectTypeOf(errorOutcome("run-1", "TIMEOUT", "took too long")).toEqualTypeOf<ErrorOutcome>();
    // @ts-expect-error "TIME_OUT" is not one of ERROR_CODES
    errorOutcome("run-1", "TIME_OUT", "took too long");
  });
});
