import { describe, expect, it } from "vitest";
import { type SearchEntry, searchCatalog, stem, tokenize } from "./search.js";

/**
 * A connector's methods from a table, one a line: the method, `approval` when a call needs it, and
 * the description, in cells split by `|`.
 */
function connector(name: string, instructions: string, table: string): SearchEntry[] {
  return table
    .trim()
    .split("\n")
    .map((line) => {
      const cells = line.split("|").map((cell) => cell.trim());
      const [method, approval, description] = cells;
      if (cells.length !== 3 || !method || !description || (approval !== "" && approval !== "approval"))
        throw new Error(`not a method row: ${line}`);
      return {
        kind: "method",
        path: `${name}.${method}`,
        connector: name,
        method,
        description,
        requiresApproval: approval === "approval",
        instructions,
      };
    });
}

/** A catalogue shaped like real ones: GitHub, Stripe, Google Drive and Google Calendar tools. */
const catalogue: SearchEntry[] = [
  ...connector(
    "github",
    "Work with GitHub repositories, issues and pull requests. Repositories are written owner/name.",
    `
      list_repositories       |          | List repositories for the authenticated user or an organization, sorted by last push.
      list_issues             |          | List issues in a repository. Filter by state (open, closed, all), labels, assignee or milestone. Pull requests are excluded.
      get_issue               |          | Get a single issue by number, with its body, labels, assignees, milestone and state.
      create_issue            | approval | Create a new issue in a repository with a title, a Markdown body, labels and assignees.
      update_issue            |          | Update an issue's title, body, labels, assignees or milestone.
      close_issue             | approval | Close an issue with a state reason: completed or not_planned.
      add_issue_comment       | approval | Add a comment to an issue or a pull request conversation.
      list_issue_comments     |          | List the comments on an issue or pull request, oldest first.
      add_labels              |          | Add labels to an issue or pull request. Labels that do not exist are created.
      assign_issue            |          | Assign one or more users to an issue or pull request.
      search_issues           |          | Search issues and pull requests across repositories with GitHub search syntax, e.g. 'is:open label:bug'.
      list_pull_requests      |          | List pull requests in a repository. Filter by state (open, closed, all), base branch or head branch.
      get_pull_request        |          | Get a pull request by number, with its mergeable state, review decision and diff stats.
      create_pull_request     | approval | Open a pull request to merge a head branch into a base branch.
      list_pull_request_files |          | List the files changed in a pull request, with additions, deletions and patch.
      request_reviewers       | approval | Request a review of a pull request from users or teams.
      merge_pull_request      | approval | Merge a pull request with the merge, squash or rebase method.
      create_branch           | approval | Create a new branch from a commit or from another branch.
    `,
  ),
  ...connector(
    "payments",
    "Stripe payments. Amounts are integers in the smallest currency unit (cents). IDs look like cus_…, ch_…, in_….",
    `
      create_customer         | approval | Create a customer with an email, name, phone and metadata.
      get_customer            |          | Retrieve a customer by ID, with their default payment method and account balance.
      list_customers          |          | List customers, newest first. Filter by exact email address.
      update_customer         | approval | Update a customer's email, name, address or default payment method.
      create_charge           | approval | Charge a customer's saved card or payment method for an amount in a currency.
      get_charge              |          | Retrieve a charge by ID, with its status, amount, refunded amount and receipt URL.
      list_charges            |          | List charges, newest first, optionally for one customer or a created date range.
      refund_charge           | approval | Refund a charge in full, or partially with an amount. Refunds go back to the original payment method.
      list_refunds            |          | List refunds, newest first, optionally for one charge.
      create_invoice          | approval | Create a draft invoice for a customer from their pending invoice items.
      finalize_invoice        | approval | Finalize a draft invoice so it can be paid; assigns its number.
      send_invoice            | approval | Email a finalized invoice to the customer with a link to pay it online.
      void_invoice            | approval | Void a finalized invoice so it can no longer be paid.
      list_invoices           |          | List invoices, optionally for one customer or status (draft, open, paid, void).
      create_subscription     | approval | Subscribe a customer to a recurring price (for example a monthly or yearly plan).
      cancel_subscription     | approval | Cancel a subscription immediately or at the end of the current billing period.
      get_balance             |          | Get the account's available and pending balance per currency.
      create_payout           | approval | Pay out the available balance to the connected bank account.
    `,
  ),
  ...connector(
    "drive",
    "Google Drive files and folders. Paths are resolved from My Drive.",
    `
      list_files              |          | List the files and folders in a folder, with name, type, size and last modified time.
      search_files            |          | Search files by name or by full-text content, optionally within one folder.
      get_file_metadata       |          | Get a file's metadata: name, MIME type, size, owners, sharing and modified time.
      download_file           |          | Download a file's content as text, or as base64 for binary files.
      upload_file             | approval | Upload a file such as a PDF, image or spreadsheet into a folder.
      create_folder           | approval | Create a new folder inside a parent folder.
      move_file               | approval | Move a file or folder to another folder, or rename it.
      copy_file               | approval | Make a copy of a file, optionally with a new name or in another folder.
      delete_file             | approval | Move a file or folder to the trash. It can be restored for 30 days.
      share_file              | approval | Share a file or folder with people by email, as viewer, commenter or editor.
      export_document         |          | Export a Google Doc, Sheet or Slides file to PDF, DOCX, XLSX or CSV.
    `,
  ),
  ...connector(
    "calendar",
    "Google Calendar. Times are ISO 8601 with a time zone; the primary calendar is used unless calendarId is given.",
    `
      list_calendars          |          | List the calendars the user can see, with their IDs and time zones.
      list_events             |          | List events between two times, expanded from recurring events, ordered by start time.
      get_event               |          | Get one event by ID with its attendees, location, conference link and description.
      create_event            | approval | Create an event with a title, start and end time, attendees and location, and send invitations.
      update_event            | approval | Reschedule an event or change its title, attendees, location or description.
      delete_event            | approval | Delete an event and notify its attendees of the cancellation.
      find_free_slots         |          | Find time slots when all given attendees are free (free/busy lookup) within working hours.
      respond_to_event        |          | Accept, decline or tentatively accept an event invitation.
    `,
  ),
];

/** What a model writes to `codemode.search`, and the method it needs. */
const queries: Array<[query: string, expected: string]> = [
  ["open a new bug report", "github.create_issue"],
  ["refund the last charge", "payments.refund_charge"],
  ["who is free on thursday", "calendar.find_free_slots"],
  ["upload a pdf", "drive.upload_file"],
  ["comment on issue 42", "github.add_issue_comment"],
  ["merge the pull request", "github.merge_pull_request"],
  ["show me open PRs", "github.list_pull_requests"],
  ["which files changed in this pr", "github.list_pull_request_files"],
  ["ask alice to review my PR", "github.request_reviewers"],
  ["close the issue as not planned", "github.close_issue"],
  ["charge the customer's card", "payments.create_charge"],
  ["email the invoice to the client", "payments.send_invoice"],
  ["cancel their subscription", "payments.cancel_subscription"],
  ["find a customer by email", "payments.list_customers"],
  ["check the account balance", "payments.get_balance"],
  ["sign the customer up for the monthly plan", "payments.create_subscription"],
  ["book a meeting with bob tomorrow at 3pm", "calendar.create_event"],
  ["reschedule the standup to friday", "calendar.update_event"],
  ["decline the invite", "calendar.respond_to_event"],
  ["delete the old draft document", "drive.delete_file"],
  ["share the spreadsheet with the finance team", "drive.share_file"],
  ["make a new folder for contracts", "drive.create_folder"],
  ["download the contract", "drive.download_file"],
  ["what meetings do I have next week", "calendar.list_events"],
  ["export the doc as pdf", "drive.export_document"],
  ["list all repos in the org", "github.list_repositories"],
  ["void an invoice", "payments.void_invoice"],
  ["add the bug label to issue 12", "github.add_labels"],
  ["create a customer for Acme Corp", "payments.create_customer"],
  ["transfer the balance to our bank", "payments.create_payout"],
];

describe("searchCatalog ranks a realistic catalogue (R-SN-3)", () => {
  it("puts the method a model needs first for at least 90% of natural queries", () => {
    expect(catalogue.length).toBeGreaterThanOrEqual(40);
    const misses: string[] = [];
    for (const [query, expected] of queries) {
      const { results } = searchCatalog(catalogue, query);
      if (results[0]?.path !== expected)
        misses.push(
          `"${query}": expected ${expected}, got ${results
            .slice(0, 3)
            .map((result) => `${result.path} (${result.score})`)
            .join(", ")}`,
        );
    }
    const first = queries.length - misses.length;
    console.log(
      `search: ${first}/${queries.length} first (${Math.round((first / queries.length) * 100)}%)${misses.length > 0 ? `\n  misses:\n  ${misses.join("\n  ")}` : ""}`,
    );
    expect(first / queries.length).toBeGreaterThanOrEqual(0.9);
  });

  it("finds the path when the model types it, or the start of it", () => {
    expect(searchCatalog(catalogue, "github.create_issue").results[0]?.path).toBe("github.create_issue");
    expect(searchCatalog(catalogue, "create_issue").results[0]?.path).toBe("github.create_issue");
    expect(searchCatalog(catalogue, "payments.refund").results[0]?.path).toBe("payments.refund_charge");
  });

  it("carries requiresApproval and the description through", () => {
    const [refund] = searchCatalog(catalogue, "refund a charge").results;
    expect(refund).toMatchObject({ kind: "method", path: "payments.refund_charge", requiresApproval: true });
    expect(refund?.description).toMatch(/^Refund a charge in full/);
    const [balance] = searchCatalog(catalogue, "balance").results;
    expect(balance).toMatchObject({ path: "payments.get_balance", requiresApproval: false });
  });
});

describe("searchCatalog mechanics", () => {
  const small: SearchEntry[] = [
    { kind: "method", path: "github.list_issues", description: "List issues in a repository." },
    { kind: "method", path: "github.create_issue", description: "Create an issue.", requiresApproval: true },
    {
      kind: "snippet",
      path: "weekly-issue-digest",
      description: "Summarise the week's new issues and post them to Slack.",
    },
    { kind: "method", path: "slack.post_message", description: "Post a message to a channel." },
  ];

  it("ranks snippets alongside methods", () => {
    const { results } = searchCatalog(small, "weekly digest of issues");
    expect(results[0]).toEqual({
      kind: "snippet",
      path: "weekly-issue-digest",
      score: expect.any(Number),
      requiresApproval: false,
      description: "Summarise the week's new issues and post them to Slack.",
    });
    expect(results.map((result) => result.kind)).toContain("method");
  });

  it("caps the results and says when more matched", () => {
    const many = searchCatalog(catalogue, "list", { limit: 3 });
    expect(many.results).toHaveLength(3);
    expect(many.truncated).toBe(true);
    expect(searchCatalog(catalogue, "list").results).toHaveLength(10);

    const few = searchCatalog(small, "slack message");
    expect(few.truncated).toBe(false);
    expect(few.results.map((result) => result.path)).toEqual(["slack.post_message", "weekly-issue-digest"]);
  });

  it("returns nothing for a query that matches nothing, and lists the catalogue for an empty one", () => {
    expect(searchCatalog(small, "zebra xylophone")).toEqual({ results: [], truncated: false });
    const everything = searchCatalog(small, "  ", { limit: 2 });
    expect(everything.results.map((result) => result.path)).toEqual(["github.create_issue", "github.list_issues"]);
    expect(everything.truncated).toBe(true);
  });

  it("breaks ties by path order, whatever the catalogue order", () => {
    const twins: SearchEntry[] = [
      { kind: "method", path: "b.ping", description: "Check the service." },
      { kind: "method", path: "a.ping", description: "Check the service." },
    ];
    const { results } = searchCatalog(twins, "ping");
    expect(results.map((result) => result.path)).toEqual(["a.ping", "b.ping"]);
    expect(results[0]?.score).toBe(results[1]?.score);
  });

  it("weighs the method name above the description and the connector's instructions", () => {
    const entries: SearchEntry[] = [
      {
        kind: "method",
        path: "crm.notes",
        description: "Notes about an invoice.",
        instructions: "Invoices live elsewhere.",
      },
      { kind: "method", path: "crm.invoice", description: "Show one record." },
      { kind: "method", path: "crm.other", description: "Unrelated.", instructions: "Mentions an invoice." },
    ];
    expect(searchCatalog(entries, "invoice").results.map((result) => result.path)).toEqual([
      "crm.invoice",
      "crm.notes",
      "crm.other",
    ]);
  });

  it("matches synonyms and word forms", () => {
    expect(searchCatalog(small, "fetch tickets").results[0]?.path).toBe("github.list_issues");
    expect(searchCatalog(small, "make a new issue").results[0]?.path).toBe("github.create_issue");
    expect(searchCatalog(small, "notify the channel").results[0]?.path).toBe("slack.post_message");
  });
});

describe("tokenize and stem", () => {
  it("splits camelCase, snake_case, kebab-case, dots and spaces into lower-case words", () => {
    expect(tokenize("github.createPRComment")).toEqual(["github", "create", "pr", "comment"]);
    expect(tokenize("list_pull-requests v2")).toEqual(["list", "pull", "requests", "v2"]);
    expect(tokenize("HTTPServer  getURLForUser")).toEqual(["http", "server", "get", "url", "for", "user"]);
    expect(tokenize("  ")).toEqual([]);
  });

  it("brings the common forms of a word to one stem", () => {
    const sameStem = (words: string[]) => new Set(words.map(stem)).size;
    expect(sameStem(["schedule", "schedules", "scheduled", "scheduling"])).toBe(1);
    expect(sameStem(["invoice", "invoices"])).toBe(1);
    expect(sameStem(["entry", "entries"])).toBe(1);
    expect(sameStem(["copy", "copied"])).toBe(1);
    expect(sameStem(["box", "boxes"])).toBe(1);
    expect(sameStem(["run", "running"])).toBe(1);
    expect(sameStem(["add", "added", "adding", "adds"])).toBe(1);
    expect(sameStem(["close", "closes", "closed", "closing"])).toBe(1);
    expect(sameStem(["pr", "prs"])).toBe(1);
    expect(stem("address")).toBe("address");
    expect(stem("status")).toBe("status");
    expect(stem("string")).toBe("string");
  });
});
