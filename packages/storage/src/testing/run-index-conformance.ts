import { describe } from "vitest";
import { indexFailureStories } from "./conformance/index-failures.js";
import { indexMoveStories } from "./conformance/index-moves.js";
import { indexPagingStories } from "./conformance/index-paging.js";
import { indexSeparationStories } from "./conformance/index-separation.js";
import { indexSharingStories } from "./conformance/index-sharing.js";
import { indexSuite } from "./conformance/index-suite.js";
import type { IndexConformanceOptions, IndexUnderTest } from "./conformance/interface.js";

/**
 * The execution index conformance suite: registers vitest stories that check an
 * `ExecutionIndexProvider` lists what the runtime relies on — pages in both orders that start
 * exactly after a cursor (rows sharing a createdAt included), status filters, moves, idempotent
 * put and remove, counts, runtime names and namespaces kept apart, 50 concurrent moves, and
 * failures that reject instead of answering an empty page. Every story uses runtime names of its
 * own, so a shared database needs no cleaning in between.
 *
 * @example
 * import { runExecutionIndexConformance } from "@codemode/storage/testing";
 * import { sqliteStorage } from "@codemode/storage/sqlite";
 *
 * runExecutionIndexConformance("sqlite", (namespace) => sqliteStorage("test.sqlite", { namespace }));
 */
export function runExecutionIndexConformance(
  name: string,
  createIndex: (namespace: string) => IndexUnderTest | Promise<IndexUnderTest>,
  options: IndexConformanceOptions = {},
): void {
  // One suite per concern, each in its own file under ./conformance/, as Keyv's test suite is split.
  describe(`${name}: execution index conformance`, () => {
    const suite = indexSuite(name, createIndex, options);
    indexPagingStories(suite);
    indexMoveStories(suite);
    indexSeparationStories(suite);
    indexSharingStories(suite);
    indexFailureStories(suite);
  });
}

export type { IndexConformanceOptions, IndexUnderTest } from "./conformance/interface.js";
