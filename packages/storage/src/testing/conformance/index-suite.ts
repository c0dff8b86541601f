import type { ExecutionIndex } from "@codemode/core/store";
import { closeAll, suiteHooks } from "../story-helpers.js";
import { runtimeName } from "./index-fixtures.js";
import type { IndexConformanceOptions, IndexUnderTest } from "./interface.js";

/** What every story of the execution index suite is handed: the backend's options, and ways to open it. */
export interface IndexSuite {
  /** `options.shared`, default true. */
  shared: boolean;
  /** The namespace every story uses, and the other one of the story about namespaces. */
  namespace: string;
  otherNamespace: string;
  /** True (after printing why) when the backend is not there and this is not CI: the story returns at once. */
  cannotRun(): boolean;
  /** An index from the factory in `inNamespace` (default `namespace`), closed after the story. */
  open(inNamespace?: string): Promise<IndexUnderTest>;
  /** A listing of a runtime name no other story uses. */
  fresh(): Promise<ExecutionIndex>;
  /** Makes the backend fail for this index: `options.breakIndex`, or `close()`. */
  breakIndex(opened: IndexUnderTest): Promise<void>;
}

/**
 * Registers the suite's hooks in the `describe` it is called in (the backend checked once before
 * the stories; what a story opened closed after it) and hands the stories their `IndexSuite`.
 */
export function indexSuite(
  name: string,
  createIndex: (namespace: string) => IndexUnderTest | Promise<IndexUnderTest>,
  options: IndexConformanceOptions,
): IndexSuite {
  const [namespace, otherNamespace] = options.namespaces ?? ["conformance-one", "conformance-two"];
  const opened: IndexUnderTest[] = [];
  const cannotRun = suiteHooks(name, options.unavailable, () => closeAll(opened));
  const open = async (inNamespace = namespace): Promise<IndexUnderTest> => {
    const index = await createIndex(inNamespace);
    opened.push(index);
    return index;
  };
  return {
    shared: options.shared ?? true,
    namespace,
    otherNamespace,
    cannotRun,
    open,
    fresh: async () => (await open()).index.forRuntime(runtimeName()),
    breakIndex: options.breakIndex ?? ((index) => index.close()),
  };
}
