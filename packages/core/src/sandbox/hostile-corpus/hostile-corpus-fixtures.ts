import { afterAll, afterEach, beforeAll, expect, type Mock, vi } from "vitest";
import type { SandboxRequest } from "../executor.js";
import { createExecutorForTests, passRunner, type Run, type RunOptions } from "../pass-fixtures.js";
import { valueCodec } from "../prelude/value-codec.js";

/**
 * For the hostile corpus (hostile-corpus-*.test.ts): programs written to escape, crash, hang or
 * fool the sandbox. Every one must leave the host alive and end as a coded failure or a result
 * that proves it stayed contained. Not part of the package's API.
 *
 * Called once at the top of each file of the corpus: it gives the file its executor and checks
 * after every test that the host is alive, that the executor still runs a clean pass and that no
 * rejection went unhandled in the host process. `run` runs a program on it (see passRunner).
 */
export function hostileCorpus(): {
  run: (code: string, options?: RunOptions) => Promise<Run>;
  unhandledRejection: Mock;
} {
  // The kind `CODEMODE_EXECUTOR` says (see pass-fixtures.ts), isolated-vm unless set.
  const executor = createExecutorForTests({ timeoutMs: 1_000 });
  const unhandledRejection = vi.fn();

  beforeAll(() => {
    process.on("unhandledRejection", unhandledRejection);
  });

  afterEach(async () => {
    // The host is alive and the executor still runs a clean pass after whatever the test did.
    const healthy = await executor.runPass({
      code: "1 + 1",
      connectors: {},
      onRequest: async () => ({ kind: "halt" }),
    });
    expect(healthy).toEqual({ status: "returned", value: "2", logs: [] });
    expect(unhandledRejection).not.toHaveBeenCalled();
  });

  afterAll(async () => {
    process.off("unhandledRejection", unhandledRejection);
    await executor.close();
  });

  return { run: passRunner(executor, { seed: "hostile", clockMs: 1_700_000_000_000 }), unhandledRejection };
}

/** Every request the host got is one of the shapes the executor promises, with fields of the right types. */
export function expectWellFormed(requests: SandboxRequest[]): void {
  for (const request of requests) {
    switch (request.type) {
      case "call":
        expect(Object.keys(request).sort()).toEqual(["args", "connector", "method", "seq", "type"]);
        expect(Number.isSafeInteger(request.seq)).toBe(true);
        if (request.args !== "") valueCodec.decode(request.args);
        break;
      case "step":
        expect(typeof request.name).toBe("string");
        expect((request.value === undefined) !== (request.error === undefined)).toBe(true);
        break;
      case "service":
      case "invalid":
        break;
      default:
        throw new Error(`unknown request ${JSON.stringify(request)}`);
    }
  }
}
