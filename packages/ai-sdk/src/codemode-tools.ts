// The tools createCodemodeTool made, so a generic approval function can tell a Code Mode call
// from another tool's whatever name the application gave the tool in its tool set.
const codemodeTools = new WeakSet<object>();

export function registerCodemodeTool<T extends object>(tool: T): T {
  codemodeTools.add(tool);
  return tool;
}

export function isCodemodeTool(tool: unknown): boolean {
  return typeof tool === "object" && tool !== null && codemodeTools.has(tool);
}
