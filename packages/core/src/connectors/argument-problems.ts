/**
 * How a failed argument check reads to the model: ajv's errors as one sentence per problem, at a
 * path written the way the model's own code reaches the value, gathered into one message per call.
 */
import type { ErrorObject } from "ajv";

/** At most this many problems are listed in one message; the rest are counted. */
const MAX_LISTED_ISSUES = 5;

/**
 * One line per problem ajv found: `if` errors are left out (the failing `then`/`else` speaks for
 * them) and the failing branches of an `anyOf`/`oneOf` become one story.
 */
export function describeAjvErrors(errors: ErrorObject[], args: unknown, root = "args"): string[] {
  return resolveAlternatives(errors.filter((error) => error.keyword !== "if").map((error) => toIssue(error, args))).map(
    (issue) => issueText(issue, root),
  );
}

// ——— Turning ajv errors into sentences a model can act on ———

/** One problem at one place in the arguments. */
interface Issue {
  path: PropertyKey[];
  schemaPath: string;
  keyword: string;
  /** What would have been accepted, when it can be merged with alternatives ("string", `"open"`). */
  expected?: string[];
  got?: string;
  /** The sentence, when the problem is not a plain expectation. */
  text?: string;
}

function issueText(issue: Issue, root: string): string {
  const where = formatPath(issue.path, root);
  if (issue.text !== undefined) return `${where}: ${issue.text}`;
  const expected = issue.expected ?? [];
  const choice =
    expected.length <= 1
      ? (expected[0] ?? "another value")
      : `${expected.slice(0, -1).join(", ")} or ${expected.at(-1)}`;
  return `${where}: expected ${choice}${issue.got === undefined ? "" : `, got ${issue.got}`}`;
}

function toIssue(error: ErrorObject, args: unknown): Issue {
  const path = pointerToPath(error.instancePath, args);
  const base = { path, schemaPath: error.schemaPath, keyword: error.keyword };
  const params = error.params as Record<string, unknown>;
  const data: unknown = error.data;
  switch (error.keyword) {
    case "type": {
      const types = Array.isArray(params.type) ? params.type.map(String) : String(params.type).split(",");
      return { ...base, expected: types.map(typeLabel), got: describeKind(data) };
    }
    case "enum":
      return {
        ...base,
        expected: (Array.isArray(params.allowedValues) ? params.allowedValues : []).map(describeLiteral),
        got: describeLiteral(data),
      };
    case "const":
      return { ...base, expected: [describeLiteral(params.allowedValue)], got: describeLiteral(data) };
    case "required":
      return { ...base, path: [...path, String(params.missingProperty)], text: "missing required property" };
    case "dependentRequired":
    case "dependencies":
      return {
        ...base,
        path: [...path, String(params.missingProperty)],
        text: `required when ${JSON.stringify(params.property)} is given`,
      };
    case "additionalProperties":
    case "unevaluatedProperties": {
      const property = String(params.additionalProperty ?? params.unevaluatedProperty);
      return {
        ...base,
        path: [...path, property],
        text: `property not allowed${allowedPropertiesHint(property, error.parentSchema)}`,
      };
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return {
        ...base,
        expected: [`a number ${String(params.comparison)} ${String(params.limit)}`],
        got: describeLiteral(data),
      };
    case "multipleOf":
      return { ...base, expected: [`a multiple of ${String(params.multipleOf)}`], got: describeLiteral(data) };
    case "minLength":
    case "maxLength":
      return {
        ...base,
        expected: [`${error.keyword === "minLength" ? "at least" : "at most"} ${count(params.limit, "character")}`],
        got: typeof data === "string" ? `${data.length}` : describeKind(data),
      };
    case "minItems":
    case "maxItems":
      return {
        ...base,
        expected: [`${error.keyword === "minItems" ? "at least" : "at most"} ${count(params.limit, "item")}`],
        got: Array.isArray(data) ? `${data.length}` : describeKind(data),
      };
    case "items":
    case "additionalItems":
      // A tuple (prefixItems / array-form items) that forbids more items than it lists.
      if (typeof params.limit === "number")
        return {
          ...base,
          expected: [`at most ${count(params.limit, "item")}`],
          got: Array.isArray(data) ? `${data.length}` : describeKind(data),
        };
      return { ...base, text: error.message ?? "has items that are not allowed" };
    case "minProperties":
    case "maxProperties":
      return {
        ...base,
        expected: [
          `${error.keyword === "minProperties" ? "at least" : "at most"} ${count(params.limit, "property", "properties")}`,
        ],
      };
    case "pattern":
      return { ...base, expected: [`a string matching /${String(params.pattern)}/`], got: describeLiteral(data) };
    case "format":
      return { ...base, expected: [`a string in format "${String(params.format)}"`], got: describeLiteral(data) };
    case "uniqueItems":
      return {
        ...base,
        text: `items ${String(params.j)} and ${String(params.i)} are duplicates; items must be unique`,
      };
    case "contains":
      return { ...base, text: "no item matches the required item shape" };
    case "not":
      return { ...base, text: "matches a shape that is not allowed here" };
    case "false schema":
      return { ...base, text: "not allowed" };
    case "oneOf":
      if (Array.isArray(params.passingSchemas))
        return {
          ...base,
          text: `matches more than one allowed shape (alternatives ${params.passingSchemas.join(" and ")}); it must match exactly one`,
        };
      return { ...base, text: "does not match any allowed shape" };
    case "anyOf":
      return { ...base, text: "does not match any allowed shape" };
    default:
      return { ...base, text: error.message ?? `fails the "${error.keyword}" rule` };
  }
}

/**
 * With `allErrors`, ajv reports every failing branch of an `anyOf`/`oneOf`. A model needs one
 * story: "expected string or number" when every branch is a plain type or value mismatch at the
 * same place, otherwise the problems of the closest branch (fewest type/value mismatches, then
 * fewest problems — the branch whose discriminator matched).
 */
function resolveAlternatives(issues: Issue[]): Issue[] {
  const combinators = issues
    .filter(
      (issue) =>
        (issue.keyword === "anyOf" || issue.keyword === "oneOf") && issue.text === "does not match any allowed shape",
    )
    .sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  let remaining = issues;
  for (const combinator of combinators) {
    const prefix = `${combinator.schemaPath}/`;
    const branches = new Map<string, Issue[]>();
    for (const issue of remaining) {
      if (!issue.schemaPath.startsWith(prefix)) continue;
      const branch = issue.schemaPath.slice(prefix.length).split("/")[0] ?? "";
      branches.set(branch, [...(branches.get(branch) ?? []), issue]);
    }
    if (branches.size === 0) continue;
    const replacement = summarizeBranches(combinator, [...branches.values()]);
    remaining = remaining.filter((issue) => issue !== combinator && !issue.schemaPath.startsWith(prefix));
    remaining.push(...replacement.map((issue) => ({ ...issue, schemaPath: combinator.schemaPath })));
  }
  return remaining;
}

function summarizeBranches(combinator: Issue, branches: Issue[][]): Issue[] {
  const samePlace = (issue: Issue) => formatPath(issue.path) === formatPath(combinator.path);
  const plainMismatch = (issue: Issue) =>
    issue.expected !== undefined && (issue.keyword === "type" || issue.keyword === "enum" || issue.keyword === "const");
  if (
    branches.every(
      (branch) => branch.length === 1 && branch[0] !== undefined && samePlace(branch[0]) && plainMismatch(branch[0]),
    )
  ) {
    const expected = [...new Set(branches.flatMap((branch) => branch[0]?.expected ?? []))];
    return [{ ...combinator, keyword: "type", expected, got: branches[0]?.[0]?.got, text: undefined }];
  }
  const ranked = branches
    .map((branch, order) => ({ branch, order, mismatches: branch.filter(plainMismatch).length }))
    .sort((a, b) => a.mismatches - b.mismatches || a.branch.length - b.branch.length || a.order - b.order);
  return ranked[0]?.branch ?? [combinator];
}

export function invalidArgumentsMessage(path: string, lines: string[]): string {
  return problemsMessage(`Invalid arguments for ${path}`, lines);
}

/** A heading and the problems under it, one per line, at most `MAX_LISTED_ISSUES` listed. */
export function problemsMessage(heading: string, lines: string[]): string {
  const unique = [...new Set(lines)];
  const listed = unique.slice(0, MAX_LISTED_ISSUES).map((line) => `- ${line}`);
  if (unique.length > MAX_LISTED_ISSUES) listed.push(`- and ${unique.length - MAX_LISTED_ISSUES} more`);
  return `${heading}:\n${listed.join("\n")}`;
}

/** A JSON Pointer into the arguments as path segments; numbers where the container is an array. */
function pointerToPath(pointer: string, args: unknown): PropertyKey[] {
  if (pointer === "") return [];
  const path: PropertyKey[] = [];
  let current: unknown = args;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current) && /^\d+$/.test(key)) {
      path.push(Number(key));
      current = current[Number(key)];
    } else {
      path.push(key);
      current = typeof current === "object" && current !== null ? (current as Record<string, unknown>)[key] : undefined;
    }
  }
  return path;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `args.items[2].quantity`, `args["content-type"]`: how the model's own code would reach the value. */
export function formatPath(path: PropertyKey[], root = "args"): string {
  let text = root;
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (typeof segment === "symbol") text += `[${segment.toString()}]`;
    else if (IDENTIFIER.test(segment)) text += `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

function count(limit: unknown, singular: string, plural = `${singular}s`): string {
  return `${String(limit)} ${limit === 1 ? singular : plural}`;
}

function typeLabel(type: string): string {
  return type === "integer" ? "an integer" : type === "array" ? "an array" : type === "object" ? "an object" : type;
}

function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return `number ${value}`;
  if (typeof value === "string") return `string ${describeLiteral(value)}`;
  if (typeof value === "object") return "an object";
  return typeof value;
}

function describeLiteral(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "an array" : "an object";
  const text = typeof value === "bigint" ? `${value}n` : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** " (allowed: a, b; did you mean "b"?)" for an unexpected property, when the schema lists them. */
function allowedPropertiesHint(property: string, parentSchema: unknown): string {
  const properties = (parentSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== "object" || properties === null) return "";
  const allowed = Object.keys(properties);
  if (allowed.length === 0) return "";
  const closest = allowed
    .map((name) => ({ name, distance: editDistance(property.toLowerCase(), name.toLowerCase()) }))
    .filter((candidate) => candidate.distance <= Math.max(1, Math.floor(property.length / 3)))
    .sort((a, b) => a.distance - b.distance)[0];
  const list = allowed.length <= 12 ? `allowed: ${allowed.join(", ")}` : `${allowed.length} properties allowed`;
  return ` (${closest ? `did you mean "${closest.name}"? ` : ""}${list})`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
