// The tools createCodemodeTool and createModelTools made, so a generic approval function can tell a
// Code Mode call from another tool's whatever name the application gave the tool in its tool set.
// A model tool maps to the tool it calls ("connector.method"); the Code Mode tool to "".
const codemodeTools = new WeakMap<object, string>();

export function registerCodemodeTool<T extends object>(tool: T, direct = ""): T {
  codemodeTools.set(tool, direct);
  return tool;
}

export function isCodemodeTool(tool: unknown): boolean {
  return typeof tool === "object" && tool !== null && codemodeTools.get(tool) === "";
}

/** The tool a model tool calls ("connector.method"); undefined for any other tool. */
export function directToolOf(tool: unknown): string | undefined {
  if (typeof tool !== "object" || tool === null) return undefined;
  const direct = codemodeTools.get(tool);
  return direct === "" ? undefined : direct;
}
