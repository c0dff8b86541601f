/** Stand-in for the reader's own connector module that docs/operating.md's config imports. */
import { defineConnector } from "@codemode/core";

export const github = defineConnector({
  name: "github",
  tools: {
    list_issues: { readOnly: true, execute: async (args: { repo: string }) => [{ repo: args.repo, number: 1 }] },
  },
});
