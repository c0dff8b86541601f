import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { PassRequest } from "../executor.js";
import type { LogCollector } from "../pass/log-collector.js";
import { PassRequests, randomBytesSource } from "../pass/pass-requests.js";
import { PRELUDE_SOURCE } from "../prelude/prelude.js";
import { RESULT_THREW } from "../prelude/sandbox-setup.js";
import type { QuickJsSandbox } from "./quickjs-sandbox.js";

/**
 * The host's end of the bridge for one pass in QuickJS (see docs/decisions.md, "Sandbox
 * bridge"): the prelude's host functions (`submit`, `log`, `randomBytes`, `finish`) and the
 * delivery of replies through the sandbox's `deliver`, each followed by the jobs it queued. What
 * is checked, ordered and waited for is in PassRequests (pass-requests.ts), as with isolated-vm.
 */
export class QuickJsBridge extends PassRequests {
  /** The sandbox's deliver function, once the prelude's setup returned it. */
  private deliverFunction: QuickJSHandle | undefined;
  /** The source of `crypto`'s bytes; let go of when the pass ends. */
  private randomBytes: ((count: unknown) => string) | undefined;

  constructor(
    private readonly sandbox: QuickJsSandbox,
    request: PassRequest,
    deadline: number,
    logs: LogCollector,
    /** Added to a line of the script QuickJS ran to get the line of the code as written. */
    private readonly lineShift: number,
  ) {
    super(request, deadline, logs);
    this.randomBytes = randomBytesSource(request.deterministic);
  }

  /**
   * Runs the prelude (prelude.ts), unchanged: its setup gets the host functions and the config
   * and returns the sandbox's deliver function. Undefined when set up, otherwise why not.
   */
  setUp(configText: string): string | undefined {
    const sandbox = this.sandbox;
    let failure: string | undefined = "the sandbox's setup did not run";
    sandbox.run((context) => {
      const prelude = context.evalCode(PRELUDE_SOURCE, "prelude.js", { type: "global" });
      if (prelude.error) {
        failure = describeFailure(sandbox, prelude.error);
        prelude.dispose();
        return;
      }
      const setup = prelude.value;
      const functions = this.hostFunctions(context);
      const config = sandbox.newString(configText);
      try {
        if (!config) return;
        const result = context.callFunction(setup, context.undefined, [...functions, config]);
        if (result.error) {
          failure = describeFailure(sandbox, result.error);
          result.dispose();
          return;
        }
        this.deliverFunction = result.value;
        failure = undefined;
      } finally {
        setup.dispose();
        for (const handle of functions) handle.dispose();
        config?.dispose();
      }
    });
    return failure;
  }

  /** The pass has ended: nothing more is delivered, timers stop, the deliver function is freed. */
  override end(): void {
    super.end();
    this.randomBytes = undefined;
    if (this.deliverFunction?.alive && this.sandbox.intact) this.deliverFunction.dispose();
  }

  protected override get sandboxReady(): boolean {
    return this.deliverFunction !== undefined && this.sandbox.running;
  }

  /** Calls `deliver(id, kind, text)` in the sandbox and runs the jobs it queued (the program's continuation). */
  protected override deliverNow(id: number, kind: number, text: string): void {
    const deliver = this.deliverFunction;
    if (!deliver) return;
    this.sandbox.run((context) => {
      const textHandle = this.sandbox.newString(text);
      if (!textHandle) return;
      const args = [context.newNumber(id), context.newNumber(kind), textHandle];
      try {
        context.callFunction(deliver, context.undefined, args).dispose();
      } finally {
        for (const handle of args) handle.dispose();
      }
    });
  }

  /**
   * The prelude's host functions, in the order its setup takes them. Each checks what it is given
   * (the sandbox is hostile), never throws into the sandbox, and stops answering when the pass
   * ends; each checks the memory after, since code ran to make its arguments.
   */
  private hostFunctions(context: QuickJSContext): QuickJSHandle[] {
    const text = (handle: QuickJSHandle | undefined): string | undefined =>
      handle !== undefined && context.typeof(handle) === "string" ? context.getString(handle) : undefined;
    const guarded =
      (body: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) =>
      (...args: QuickJSHandle[]): QuickJSHandle | undefined => {
        if (this.ended) return undefined;
        try {
          return body(...args);
        } catch {
          // A host function never throws into the sandbox: the call is ignored.
          return undefined;
        } finally {
          this.sandbox.checkMemory();
        }
      };
    return [
      context.newFunction(
        "submit",
        guarded((id, request, args) => {
          const requestText = text(request);
          if (!id || context.typeof(id) !== "number" || requestText === undefined) return undefined;
          // Arguments that are not text reach the check as such, and are refused there.
          const argsText =
            args === undefined || context.typeof(args) === "undefined" ? undefined : (text(args) ?? null);
          this.submit(context.getNumber(id), requestText, argsText);
          return undefined;
        }),
      ),
      context.newFunction(
        "log",
        guarded((level, line) => {
          const levelText = text(level);
          const lineText = text(line);
          if (levelText !== undefined && lineText !== undefined) this.logs.add(levelText, lineText);
          return undefined;
        }),
      ),
      context.newFunction(
        "randomBytes",
        guarded((count) => {
          const bytes = this.randomBytes?.(count && context.typeof(count) === "number" ? context.getNumber(count) : 0);
          // Through the sandbox's check like every copy in: a program that filled the memory
          // (and caught QuickJS's "out of memory") must not have the copy written unchecked.
          return this.sandbox.newString(bytes ?? "") ?? context.undefined;
        }),
      ),
      context.newFunction(
        "finish",
        guarded((end) => {
          const endText = text(end);
          if (endText !== undefined) this.finish(shiftThrownLine(endText, this.lineShift));
          return undefined;
        }),
      ),
    ];
  }
}

function describeFailure(sandbox: QuickJsSandbox, error: QuickJSHandle): string {
  const thrown = sandbox.describe(error);
  return `${thrown.name}: ${thrown.message}`;
}

/**
 * The end text `__codemode_start` reported, with the line of a thrown error moved from the
 * script QuickJS ran to the code as written (QuickJS has no line offset for a script). Line 1 is
 * the wrapper's (see programScript): QuickJS names it when it knows no better place, and the
 * error then has no position.
 */
export function shiftThrownLine(text: string, shift: number): string {
  if (!text.startsWith(RESULT_THREW)) return text;
  try {
    const thrown = JSON.parse(text.slice(1)) as { line?: unknown; column?: unknown };
    if (typeof thrown.line !== "number") return text;
    const placed = thrown.line > 1;
    return (
      RESULT_THREW +
      JSON.stringify({
        ...thrown,
        line: placed ? thrown.line + shift : null,
        column: placed ? thrown.column : null,
      })
    );
  } catch {
    return text;
  }
}
