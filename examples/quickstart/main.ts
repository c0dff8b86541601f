// Quickstart: a "model" writes one program against two connectors; the approval-gated write
// pauses the run. The run lives in a SQLite file (.codemode/quickstart.sqlite), so it can be
// approved here, at the prompt, or later from another process:
//
//   npm start                                  # runs the program; it pauses at the order
//   npm run quickstart:approve -- <executionId> # approves it from a new process; it finishes
//
// In a terminal, `npm start` also offers to approve on the spot. No keys, no servers.
import type { Outcome } from "@codemode/core";
import { askLine, indent } from "../shared/terminal.ts";
import { openShop, printRecord, report, STORE_FILE } from "./shop.ts";

// --- what the model wrote -------------------------------------------------------------------------
const program = `async () => {
  const found = await catalog.search_products({ query: "mug" });
  const inStock = found.filter((product) => product.stock > 0);
  if (inStock.length === 0) return { ordered: null, reason: "nothing in stock" };
  const choice = inStock[0];
  console.log("ordering", choice.name, "at", choice.price);
  const order = await shop.create_order({ sku: choice.sku, quantity: 2 });
  return { ordered: order.orderId, total: choice.price * 2 };
}`;

// --- the host ----------------------------------------------------------------------------------------
const { runtime, storage } = openShop();
console.log(`Store: ${STORE_FILE}\n`);
console.log("The model's program:\n");
console.log(indent(program));
console.log("\n→ runtime.execute({ code })");
let outcome: Outcome = await runtime.execute({ code: program });
report(outcome);

while (outcome.status === "paused") {
  const action = outcome.pending[0]!;
  const answer = await askApproval(`Approve ${action.connector}.${action.method}(${JSON.stringify(action.args)})?`);
  if (answer === "later") {
    console.log(`\nThe run stays paused in the store; nothing was ordered yet. Approve it from another process:`);
    console.log(`\n  npm run quickstart:approve -- ${outcome.executionId}\n`);
    break;
  }
  if (answer === "no") {
    await runtime.reject({
      executionId: outcome.executionId,
      seq: action.seq,
      by: "quickstart user",
      reason: "declined in the terminal",
    });
    console.log("\nRejected. The execution ends 'rejected'; nothing was ordered.");
    break;
  }
  console.log(`\n→ runtime.approve({ executionId, seq: ${action.seq} })`);
  outcome = await runtime.approve({ executionId: outcome.executionId, seq: action.seq, by: "quickstart user" });
  report(outcome);
}

await printRecord(runtime, outcome.executionId);
await runtime.close();
await storage.close();

// --- helpers ---------------------------------------------------------------------------------------
/** In a terminal: yes, no, or later. Elsewhere (CI, a pipe): later, so the run stays paused. */
async function askApproval(question: string): Promise<"yes" | "no" | "later"> {
  if (!process.stdin.isTTY) {
    console.log(`\n${question} (not a terminal: leaving it for later)`);
    return "later";
  }
  const answer = await askLine(`\n${question} [y]es, [n]o, or [l]ater from another process (default): `);
  if (/^y(es)?$/i.test(answer)) return "yes";
  if (/^n(o)?$/i.test(answer)) return "no";
  return "later";
}
