/**
 * A small JSON Schema checker for the edit form: the page runs these very functions (their
 * source is put into its script) to show a person what the tool would refuse while they type,
 * before anything is sent. The runtime checks again with the tool's own validator, which is
 * the word that counts; this one covers what a form needs: type, enum, const, required,
 * properties, additionalProperties, items, lengths, bounds, pattern, allOf / anyOf / oneOf and
 * local `$ref`s. Each function stands alone (no imports, no closures over module names) because
 * the page gets their text.
 */

/** Where a check is, and what it found so far. */
interface SchemaCheck {
  root: unknown;
  problems: string[];
  limit: number;
}

/**
 * The ways `value` does not fit `schema`, at most `limit`, each a sentence that names where.
 *
 * @example
 * schemaProblems({ qty: 50 }, { type: "object", properties: { qty: { maximum: 10 } } }) // ["qty must be at most 10"]
 */
export function schemaProblems(value: unknown, schema: unknown, limit = 20): string[] {
  const check: SchemaCheck = { root: schema, problems: [], limit };
  schemaCheckNode(check, value, schema, "", 0);
  return check.problems.slice(0, limit);
}

/** Checks one value against one (sub)schema; `path` is where the value sits, "" for the whole. */
export function schemaCheckNode(
  check: SchemaCheck,
  value: unknown,
  schema: unknown,
  path: string,
  depth: number,
): void {
  const { problems } = check;
  if (problems.length >= check.limit || depth > 64) return;
  const at = path === "" ? "the arguments" : path;
  if (schema === false) return void problems.push(`${at} is not allowed`);
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return;
  const rules = schema as Record<string, unknown>;
  if (typeof rules.$ref === "string") {
    const target = schemaCheckResolve(check.root, rules.$ref);
    if (target !== undefined) schemaCheckNode(check, value, target, path, depth + 1);
  }
  if (rules.type !== undefined) {
    const types = (Array.isArray(rules.type) ? rules.type : [rules.type]).map(String);
    if (!types.some((type) => schemaCheckIsType(value, type)))
      return void problems.push(`${at} must be ${types.map(schemaCheckTypeName).join(" or ")}`);
  }
  if (Array.isArray(rules.enum) && !rules.enum.some((option) => schemaCheckEqual(option, value)))
    problems.push(`${at} must be one of ${rules.enum.map((option) => JSON.stringify(option)).join(", ")}`);
  if (Object.hasOwn(rules, "const") && !schemaCheckEqual(rules.const, value))
    problems.push(`${at} must be ${JSON.stringify(rules.const)}`);
  if (typeof value === "number") schemaCheckNumber(check, value, rules, at);
  if (typeof value === "string") schemaCheckString(check, value, rules, at);
  if (Array.isArray(value)) schemaCheckArray(check, value, rules, path, depth);
  else if (typeof value === "object" && value !== null)
    schemaCheckObject(check, value as Record<string, unknown>, rules, path, depth);
  schemaCheckCombined(check, value, rules, path, depth);
}

export function schemaCheckNumber(check: SchemaCheck, value: number, rules: Record<string, unknown>, at: string): void {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = rules;
  if (typeof minimum === "number") {
    if (exclusiveMinimum === true ? value <= minimum : value < minimum)
      check.problems.push(`${at} must be ${exclusiveMinimum === true ? "greater than" : "at least"} ${minimum}`);
  }
  if (typeof maximum === "number") {
    if (exclusiveMaximum === true ? value >= maximum : value > maximum)
      check.problems.push(`${at} must be ${exclusiveMaximum === true ? "less than" : "at most"} ${maximum}`);
  }
  if (typeof exclusiveMinimum === "number" && value <= exclusiveMinimum)
    check.problems.push(`${at} must be greater than ${exclusiveMinimum}`);
  if (typeof exclusiveMaximum === "number" && value >= exclusiveMaximum)
    check.problems.push(`${at} must be less than ${exclusiveMaximum}`);
  if (
    typeof multipleOf === "number" &&
    multipleOf > 0 &&
    Math.abs(value / multipleOf - Math.round(value / multipleOf)) > 1e-9
  )
    check.problems.push(`${at} must be a multiple of ${multipleOf}`);
}

export function schemaCheckString(check: SchemaCheck, value: string, rules: Record<string, unknown>, at: string): void {
  const length = [...value].length;
  if (typeof rules.minLength === "number" && length < rules.minLength)
    check.problems.push(`${at} must be at least ${rules.minLength} character${rules.minLength === 1 ? "" : "s"} long`);
  if (typeof rules.maxLength === "number" && length > rules.maxLength)
    check.problems.push(`${at} must be at most ${rules.maxLength} character${rules.maxLength === 1 ? "" : "s"} long`);
  // Only a pattern the browser's backtracking engine matches in linear time is checked here; any
  // other is left to the runtime, which matches every pattern in linear time when the edit is sent.
  if (typeof rules.pattern === "string" && schemaCheckLinearPattern(rules.pattern)) {
    let pattern: RegExp | undefined;
    try {
      pattern = new RegExp(rules.pattern, "u");
    } catch {
      pattern = undefined;
    }
    if (pattern && !pattern.test(value)) check.problems.push(`${at} must match the pattern ${rules.pattern}`);
  }
}

/**
 * Whether a backtracking engine matches `pattern` in time linear in the input: anchored at the
 * start (one place to try), at most one quantifier of variable count (`*`, `+`, `?`, `{n,m}`,
 * `{n,}`; exact counts `{n}` are free), no group, alternation, backreference or lookaround, and
 * at most 200 characters. That keeps the common patterns of tool schemas (`^[a-z0-9-]+$`,
 * `^[A-Z]{3}-[0-9]{4}$`) and leaves every pattern that could take exponential or polynomial time
 * (`^(a+)+$`, `a*a*a*b`, an unanchored search) to the runtime's linear-time engine.
 */
export function schemaCheckLinearPattern(pattern: string): boolean {
  if (pattern.length > 200 || !pattern.startsWith("^")) return false;
  let unbounded = 0;
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === "\\") {
      const next = pattern[index + 1] ?? "";
      // A backreference (\1, \k<name>) needs backtracking.
      if (/[1-9k]/.test(next)) return false;
      index++;
      continue;
    }
    if (inClass) {
      if (character === "]") inClass = false;
      continue;
    }
    if (character === "[") inClass = true;
    else if (character === "|" || character === "(") return false;
    else if (character === "*" || character === "+" || character === "?") unbounded++;
    else if (character === "{" && /^\{\d+,\d*\}/.test(pattern.slice(index))) unbounded++;
  }
  return unbounded <= 1;
}

export function schemaCheckArray(
  check: SchemaCheck,
  value: unknown[],
  rules: Record<string, unknown>,
  path: string,
  depth: number,
): void {
  const at = path === "" ? "the arguments" : path;
  if (typeof rules.minItems === "number" && value.length < rules.minItems)
    check.problems.push(`${at} must have at least ${rules.minItems} item${rules.minItems === 1 ? "" : "s"}`);
  if (typeof rules.maxItems === "number" && value.length > rules.maxItems)
    check.problems.push(`${at} must have at most ${rules.maxItems} item${rules.maxItems === 1 ? "" : "s"}`);
  const tuple = Array.isArray(rules.prefixItems) ? rules.prefixItems : Array.isArray(rules.items) ? rules.items : [];
  const rest = Array.isArray(rules.items) ? rules.additionalItems : rules.items;
  value.forEach((item, index) => {
    const itemSchema = index < tuple.length ? tuple[index] : rest;
    if (itemSchema !== undefined) schemaCheckNode(check, item, itemSchema, `${path}[${index}]`, depth + 1);
  });
}

export function schemaCheckObject(
  check: SchemaCheck,
  value: Record<string, unknown>,
  rules: Record<string, unknown>,
  path: string,
  depth: number,
): void {
  const properties = (
    typeof rules.properties === "object" && rules.properties !== null ? rules.properties : {}
  ) as Record<string, unknown>;
  const child = (key: string) =>
    `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `${path === "" ? "" : "."}${key}` : `[${JSON.stringify(key)}]`}`;
  if (Array.isArray(rules.required))
    for (const key of rules.required)
      if (typeof key === "string" && !Object.hasOwn(value, key)) check.problems.push(`${child(key)} is required`);
  for (const [key, item] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) schemaCheckNode(check, item, properties[key], child(key), depth + 1);
    else if (rules.additionalProperties === false)
      check.problems.push(`${child(key)} is not allowed (the tool takes no such property)`);
    else if (typeof rules.additionalProperties === "object")
      schemaCheckNode(check, item, rules.additionalProperties, child(key), depth + 1);
  }
}

/** allOf: every one; anyOf: at least one; oneOf: exactly one. */
export function schemaCheckCombined(
  check: SchemaCheck,
  value: unknown,
  rules: Record<string, unknown>,
  path: string,
  depth: number,
): void {
  const at = path === "" ? "the arguments" : path;
  if (Array.isArray(rules.allOf)) for (const part of rules.allOf) schemaCheckNode(check, value, part, path, depth + 1);
  const fitting = (parts: unknown[]) =>
    parts.filter((part) => {
      const alone: SchemaCheck = { root: check.root, problems: [], limit: 1 };
      schemaCheckNode(alone, value, part, path, depth + 1);
      return alone.problems.length === 0;
    }).length;
  if (Array.isArray(rules.anyOf) && rules.anyOf.length > 0 && fitting(rules.anyOf) === 0)
    check.problems.push(`${at} fits none of the shapes the tool takes`);
  if (Array.isArray(rules.oneOf) && rules.oneOf.length > 0 && fitting(rules.oneOf) !== 1)
    check.problems.push(`${at} must fit exactly one of the shapes the tool takes`);
}

export function schemaCheckIsType(value: unknown, type: string): boolean {
  if (type === "integer") return Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  if (type === "array") return Array.isArray(value);
  if (type === "null") return value === null;
  if (type === "object") return typeof value === "object" && value !== null && !Array.isArray(value);
  return typeof value === type;
}

export function schemaCheckTypeName(type: string): string {
  if (type === "integer") return "a whole number";
  if (type === "null") return "null";
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

export function schemaCheckEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== "object" || typeof right !== "object" || left === null || right === null) return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  const rightKeys = Object.keys(right);
  if (leftKeys.length !== rightKeys.length) return false;
  return leftKeys.every(
    (key) =>
      Object.hasOwn(right, key) &&
      schemaCheckEqual((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]),
  );
}

/** A local `$ref` ("#/$defs/item"); undefined for one that points elsewhere (not checked here). */
export function schemaCheckResolve(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The checker's source, for the page's script: every function above, by its own text. */
export const SCHEMA_CHECK_SOURCE = [
  schemaProblems,
  schemaCheckNode,
  schemaCheckNumber,
  schemaCheckString,
  schemaCheckLinearPattern,
  schemaCheckArray,
  schemaCheckObject,
  schemaCheckCombined,
  schemaCheckIsType,
  schemaCheckTypeName,
  schemaCheckEqual,
  schemaCheckResolve,
]
  .map(String)
  .join("\n");
