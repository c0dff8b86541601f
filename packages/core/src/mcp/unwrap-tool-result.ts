/**
 * What a Code Mode program gets from an MCP tool result (R-CON-5): `structuredContent` when the
 * server sent it; otherwise the text content, parsed as JSON when it is JSON, else the text
 * itself. Content that is not all text (images, audio, resources) comes back as the content
 * blocks themselves, so nothing is dropped. `isError` becomes a thrown `Error` carrying the text,
 * which rejects the call inside the sandbox (R-CON-3).
 *
 * @example
 * unwrapToolResult({ content: [{ type: "text", text: '{"id":1}' }] }); // { id: 1 }
 * unwrapToolResult({ content: [{ type: "text", text: "no such note" }], isError: true }); // throws Error("no such note")
 */
export function unwrapToolResult(result: unknown, label: string): unknown {
  if (typeof result !== "object" || result === null)
    throw new Error(`${label} answered with something that is not an MCP tool result`);
  const { content, structuredContent, isError, toolResult } = result as {
    content?: unknown;
    structuredContent?: unknown;
    isError?: unknown;
    toolResult?: unknown;
  };
  const blocks = Array.isArray(content) ? (content as unknown[]) : [];
  if (isError === true) {
    const text = textOf(blocks);
    throw new Error(text ? text : `${label} failed without a message`);
  }
  if (structuredContent !== undefined && structuredContent !== null) return structuredContent;
  // Servers of protocol version 2024-10-07 answered `{ toolResult }`.
  if (!Array.isArray(content) && toolResult !== undefined) return toolResult;
  if (blocks.length === 0) return null;
  if (!blocks.every(isTextBlock)) return blocks;
  const text = textOf(blocks)!;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isTextBlock(block: unknown): block is { type: "text"; text: string } {
  return (
    typeof block === "object" &&
    block !== null &&
    (block as { type?: unknown }).type === "text" &&
    typeof (block as { text?: unknown }).text === "string"
  );
}

/** The text blocks joined by newlines; undefined when there is none. */
function textOf(blocks: unknown[]): string | undefined {
  const texts = blocks.filter(isTextBlock).map((block) => block.text);
  return texts.length > 0 ? texts.join("\n") : undefined;
}
