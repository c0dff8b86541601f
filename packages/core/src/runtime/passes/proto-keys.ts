/**
 * Arguments with an own `__proto__` key are refused before any decision (issue 17.9). JSON gives
 * such a key as an ordinary property, so an approval rule reading `args.amount` does not see
 * what it holds, but a tool that copies the arguments (`Object.assign({}, args)`, a merge) turns
 * it into the copy's prototype, and `copy.amount` then reads it. No tool needs such a key.
 */

/** Deepest nesting searched; the value codec refuses deeper values anyway (512 levels). */
const MAX_DEPTH = 600;

/** Where the first own `__proto__` key of decoded arguments is (`args.order.__proto__`), or undefined. */
export function protoKeyPath(argsText: string, args: unknown): string | undefined {
  // Most arguments never mention it: the text says so without a walk.
  if (!argsText.includes('"__proto__"')) return undefined;
  const path: Array<string | number> = [];
  return find(args, path, 0) ? formatPath(path) : undefined;
}

export function protoKeyMessage(connector: string, method: string, path: string): string {
  return `Invalid arguments for ${connector}.${method}:\n- ${path}: a key named "__proto__" is not accepted (copying the arguments could make it an object's prototype); rename the key`;
}

function find(value: unknown, path: Array<string | number>, depth: number): boolean {
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH || value instanceof Uint8Array) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      path.push(index);
      if (find(value[index], path, depth + 1)) return true;
      path.pop();
    }
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    path.push(key);
    if (key === "__proto__" || find(record[key], path, depth + 1)) return true;
    path.pop();
  }
  return false;
}

function formatPath(path: Array<string | number>): string {
  return path.reduce<string>((text, key) => (typeof key === "number" ? `${text}[${key}]` : `${text}.${key}`), "args");
}
