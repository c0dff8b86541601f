/** One thing `codemode.search` can find: a connector method or a saved snippet (R-SN-3). */
export interface SearchEntry {
  kind: "method" | "snippet";
  /** What the model writes to use it: "github.create_issue", or the snippet's name. */
  path: string;
  /** Defaults to the part of `path` before the first dot, for methods. */
  connector?: string;
  /** Defaults to the part of `path` after the first dot, for methods. */
  method?: string;
  description?: string;
  /** Default false. */
  requiresApproval?: boolean;
  /** The connector's instructions; they speak for every method of that connector, so they weigh least. */
  instructions?: string;
}

export interface SearchResult {
  kind: "method" | "snippet";
  path: string;
  /** Higher is better; only comparable within one search. */
  score: number;
  requiresApproval: boolean;
  description?: string;
}

export interface SearchOptions {
  /** How many results at most. Default 10. */
  limit?: number;
}

const DEFAULT_LIMIT = 10;

// How much a query word counts where it is found: the name says what a thing does, the
// connector where, the description how, the instructions only what the whole connector is about.
const FIELD_WEIGHTS = { name: 10, connector: 6, description: 3, instructions: 1 } as const;
type Field = keyof typeof FIELD_WEIGHTS;

// How well a query word matches an entry word: the same stem, a synonym, or one a prefix of the other.
// A prefix match weakens with every extra letter: "review" is close to "reviewer", far from "reviewership".
const EXACT_MATCH = 1;
const SYNONYM_MATCH = 0.6;
const CLOSEST_PREFIX_MATCH = 0.9;
const FARTHEST_PREFIX_MATCH = 0.4;

/** Added per name word the query covers, so "create issue" prefers create_issue to create_issue_comment. */
const NAME_COVERAGE_BONUS = 6;

/**
 * Words agents use for the same action or thing. Small and general on purpose: a word in one
 * group matches the others at SYNONYM_MATCH strength. A word may sit in two groups ("book" a
 * meeting is also to create one). "pull request" is folded to "pr" first.
 */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ["list", "get", "fetch", "find", "search", "read", "show", "view", "lookup", "retrieve"],
  ["create", "add", "new", "make", "open", "book", "schedule"],
  ["delete", "remove", "close", "cancel"],
  ["update", "edit", "modify", "change", "set"],
  ["send", "post", "notify"],
  ["pay", "charge", "payment"],
  ["refund"],
  ["schedule", "book", "meeting", "event", "appointment"],
  ["file", "document", "doc", "attachment"],
  ["issue", "ticket", "bug"],
];

// Words that carry no meaning for finding a method; dropped from queries and from texts.
const STOP_WORDS = new Set(
  (
    "a an the to for of in on at by with from into onto and or but not is are was were be been being do does did " +
    "have has had i me my mine we us our you your it its this that these those who whom what which when where why how " +
    "please can could would should will shall may might any some all each every there here then than so as if just " +
    "about up out over also want need like s t let lets"
  ).split(" "),
);

const synonymGroupsOf = new Map<string, number[]>();
SYNONYM_GROUPS.forEach((group, index) => {
  for (const word of group) synonymGroupsOf.set(stem(word), [...(synonymGroupsOf.get(stem(word)) ?? []), index]);
});

function areSynonyms(term: string, word: string): boolean {
  const groups = synonymGroupsOf.get(term);
  return groups !== undefined && (synonymGroupsOf.get(word) ?? []).some((group) => groups.includes(group));
}

/**
 * Ranks connector methods and snippets together for a natural-language query (R-SN-3). Query
 * words are matched against each entry's name, connector, description and connector
 * instructions (in falling weight), by stem, synonym or prefix; rare words count for more than
 * words every entry shares. Ties keep path order. An empty query lists the catalogue.
 *
 * @example
 * searchCatalog(
 *   [
 *     { kind: "method", path: "github.create_issue", description: "Open a new issue", requiresApproval: true },
 *     { kind: "method", path: "github.list_issues", description: "List issues of a repository" },
 *   ],
 *   "open a new ticket",
 * );
 * // { results: [{ kind: "method", path: "github.create_issue", score: …, requiresApproval: true, description: "Open a new issue" }, …],
 * //   truncated: false }
 */
export function searchCatalog(
  entries: readonly SearchEntry[],
  query: string,
  options: SearchOptions = {},
): { results: SearchResult[]; truncated: boolean } {
  const limit = Math.max(0, Math.floor(options.limit ?? DEFAULT_LIMIT));
  const indexed = entries.map(indexEntry);
  const queryTerms = [...new Set(terms(query))];

  let scored: Array<{ entry: SearchEntry; score: number }>;
  if (queryTerms.length === 0) {
    scored = entries.map((entry) => ({ entry, score: 0 }));
  } else {
    // Inverse document frequency over what identifies an entry (its own words, not the shared instructions).
    const rarity = new Map<string, number>();
    for (const term of queryTerms) {
      const containing = indexed.filter((entry) => matchQuality(term, entry.identifying) > 0).length;
      rarity.set(term, Math.log(1 + indexed.length / Math.max(1, containing)));
    }
    const phrase = query.trim().toLowerCase();
    scored = indexed
      .map((entry) => ({ entry: entry.entry, score: scoreEntry(entry, queryTerms, rarity, phrase) }))
      .filter((candidate) => candidate.score > 0);
  }

  scored.sort((a, b) => b.score - a.score || comparePaths(a.entry.path, b.entry.path));
  const results = scored.slice(0, limit).map(({ entry, score }) => {
    const result: SearchResult = {
      kind: entry.kind,
      path: entry.path,
      score: Math.round(score * 100) / 100,
      requiresApproval: entry.requiresApproval ?? false,
    };
    if (entry.description !== undefined) result.description = entry.description;
    return result;
  });
  return { results, truncated: scored.length > limit };
}

const MAX_TOKENIZED_CHARS = 2_000;

/**
 * Splits text into lower-case words at camelCase humps, underscores, dashes, dots, slashes and
 * spaces (no stemming).
 *
 * @example
 * tokenize("github.createPRComment"); // ["github", "create", "pr", "comment"]
 * tokenize("list_pull-requests v2");  // ["list", "pull", "requests", "v2"]
 */
export function tokenize(text: string): string[] {
  // Queries come from model code: words past the first couple of thousand characters add
  // nothing, and the acronym patterns below are quadratic on long runs of capitals.
  return text
    .slice(0, MAX_TOKENIZED_CHARS)
    .replace(/([A-Z]{2,})s(?![a-z])/g, "$1S") // "PRs", "URLs": a plural acronym is one word
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/**
 * Reduces an English word to a stem shared by its common forms: plurals (-s, -es, -ies), -ing and
 * -ed, and a final silent e, so "schedule", "schedules", "scheduled" and "scheduling" meet.
 *
 * @example
 * stem("invoices"); // "invoic" — the same as stem("invoice")
 * stem("copied");   // "copy"
 */
export function stem(word: string): string {
  let result = word;
  if (result.length > 4 && result.endsWith("ies")) result = `${result.slice(0, -3)}y`;
  else if (result.length > 4 && /(s|x|z|ch|sh)es$/.test(result)) result = result.slice(0, -2);
  else if (result.length >= 3 && result.endsWith("s") && !/(ss|us|is)$/.test(result)) result = result.slice(0, -1);

  if (result.length > 4 && result.endsWith("ied")) result = `${result.slice(0, -3)}y`;
  else if (result.length > 4 && result.endsWith("ing") && hasVowel(result.slice(0, -3)))
    result = undouble(result.slice(0, -3));
  else if (result.length > 4 && result.endsWith("ed") && hasVowel(result.slice(0, -2)))
    result = undouble(result.slice(0, -2));

  if (result.length >= 3 && result.endsWith("e") && !result.endsWith("ee")) result = result.slice(0, -1);
  return result;
}

function hasVowel(text: string): boolean {
  return /[aeiouy]/.test(text);
}

/** "runn" → "run", "shipp" → "ship"; "add", "bill", "pass" keep their double letter. */
function undouble(text: string): string {
  return text.length >= 4 && /([bdgmnprt])\1$/.test(text) ? text.slice(0, -1) : text;
}

/** Stemmed, meaningful words of a text, with "pull request" folded into "pr". */
function terms(text: string): string[] {
  const words = tokenize(text);
  const folded: string[] = [];
  for (let index = 0; index < words.length; index++) {
    if (words[index] === "pull" && /^requests?$/.test(words[index + 1] ?? "")) {
      folded.push("pr");
      index++;
    } else {
      folded.push(words[index] ?? "");
    }
  }
  return folded.filter((word) => !STOP_WORDS.has(word)).map(stem);
}

interface IndexedEntry {
  entry: SearchEntry;
  /** The method or snippet name, lower-case, as written. */
  name: string;
  fields: Record<Field, string[]>;
  /** Name, connector and description words together. */
  identifying: string[];
}

function indexEntry(entry: SearchEntry): IndexedEntry {
  const dot = entry.path.indexOf(".");
  const isMethod = entry.kind === "method";
  const connector = entry.connector ?? (isMethod && dot > 0 ? entry.path.slice(0, dot) : "");
  const name = entry.method ?? (isMethod && dot > 0 ? entry.path.slice(dot + 1) : entry.path);
  const fields: Record<Field, string[]> = {
    name: terms(name),
    connector: terms(connector),
    description: terms(entry.description ?? ""),
    instructions: terms(entry.instructions ?? ""),
  };
  return {
    entry,
    name: name.toLowerCase(),
    fields,
    identifying: [...fields.name, ...fields.connector, ...fields.description],
  };
}

/** The best match strength of a query term among some entry words; 0 when none. */
function matchQuality(term: string, words: readonly string[]): number {
  let best = 0;
  for (const word of words) {
    if (word === term) return EXACT_MATCH;
    if (areSynonyms(term, word)) best = Math.max(best, SYNONYM_MATCH);
    else if (term.length >= 3 && word.length >= 3 && (word.startsWith(term) || term.startsWith(word))) {
      const extraLetters = Math.abs(word.length - term.length);
      best = Math.max(best, CLOSEST_PREFIX_MATCH - 0.1 * (extraLetters - 1), FARTHEST_PREFIX_MATCH);
    }
  }
  return best;
}

function scoreEntry(
  indexed: IndexedEntry,
  queryTerms: readonly string[],
  rarity: ReadonlyMap<string, number>,
  phrase: string,
): number {
  let score = 0;
  for (const term of queryTerms) {
    let best = 0;
    for (const field of Object.keys(FIELD_WEIGHTS) as Field[]) {
      best = Math.max(best, FIELD_WEIGHTS[field] * matchQuality(term, indexed.fields[field]));
    }
    score += best * (rarity.get(term) ?? 1);
  }
  if (score === 0) return 0;

  const nameWords = indexed.fields.name;
  if (nameWords.length > 0) {
    const covered = nameWords.filter((word) => queryTerms.some((term) => matchQuality(term, [word]) > 0)).length;
    score += (NAME_COVERAGE_BONUS * covered) / nameWords.length;
  }

  // The model typed the path, or the start of it.
  const path = indexed.entry.path.toLowerCase();
  if (phrase === path || phrase === indexed.name) score += 50;
  else if (phrase.length >= 3 && path.startsWith(phrase)) score += 20;
  else if (phrase.includes(path)) score += 20;
  return score;
}

function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
