// Names a JavaScript object key must not take: the connector's tools live in a plain object.
const UNSAFE = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Method names for tools that come from elsewhere (LangChain tools, AI SDK tool sets, MCP
 * servers), whose names need not be JavaScript identifiers: every character that cannot appear in
 * an identifier becomes `_`, a leading digit gets a `_` before it, and a name that then collides
 * gets `_2`, `_3`… in the order given. Names that are identifiers always keep them.
 *
 * @example
 * methodNamesFor(["get-weather", "get_weather", "2fa"]);
 * // Map { "get-weather" => "get_weather_2", "get_weather" => "get_weather", "2fa" => "_2fa" }
 */
export function methodNamesFor(names: Iterable<string>): Map<string, string> {
  const originals = [...names];
  const result = new Map<string, string>();
  // Names that are already identifiers keep them; others take what is left.
  const taken = new Set(originals.filter((name) => toIdentifier(name) === name));
  for (const name of originals) {
    if (result.has(name)) continue;
    const base = toIdentifier(name);
    if (base === name) {
      result.set(name, name);
      continue;
    }
    let candidate = base;
    for (let suffix = 2; taken.has(candidate); suffix += 1) candidate = `${base}_${suffix}`;
    taken.add(candidate);
    result.set(name, candidate);
  }
  return result;
}

function toIdentifier(name: string): string {
  let identifier = name.replace(/[^\w$]/g, "_");
  if (identifier === "" || /^\d/.test(identifier)) identifier = `_${identifier}`;
  return UNSAFE.has(identifier) ? `${identifier}_` : identifier;
}
