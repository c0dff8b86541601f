import { describe, expect, it } from "vitest";
import { unwrapToolResult } from "./unwrap-tool-result.js";

const text = (value: string) => ({ type: "text", text: value });

describe("unwrapToolResult (R-CON-5)", () => {
  it("prefers structuredContent over the text beside it", () => {
    expect(unwrapToolResult({ content: [text('{"id":1}')], structuredContent: { id: 1, extra: true } }, "t")).toEqual({
      id: 1,
      extra: true,
    });
  });

  it("parses JSON text, and keeps text that is not JSON as it is", () => {
    expect(unwrapToolResult({ content: [text("[1,2]")] }, "t")).toEqual([1, 2]);
    expect(unwrapToolResult({ content: [text("42")] }, "t")).toBe(42);
    expect(unwrapToolResult({ content: [text("Hello, Ann")] }, "t")).toBe("Hello, Ann");
    expect(unwrapToolResult({ content: [text("line one"), text("line two")] }, "t")).toBe("line one\nline two");
  });

  it("answers null for empty content and the blocks themselves when some are not text", () => {
    expect(unwrapToolResult({ content: [] }, "t")).toBeNull();
    const blocks = [text("a chart"), { type: "image", data: "AAAA", mimeType: "image/png" }];
    expect(unwrapToolResult({ content: blocks }, "t")).toEqual(blocks);
  });

  it("turns isError into an Error carrying the text, even with structuredContent", () => {
    expect(() =>
      unwrapToolResult(
        { isError: true, content: [text("no note 9")], structuredContent: { code: 404 } },
        "notes.get_note",
      ),
    ).toThrow(/^no note 9$/);
    expect(() => unwrapToolResult({ isError: true, content: [] }, "notes.get_note")).toThrow(
      "notes.get_note failed without a message",
    );
  });

  it("reads the 2024-10-07 toolResult shape and refuses what is not a result", () => {
    expect(unwrapToolResult({ toolResult: { ok: true } }, "t")).toEqual({ ok: true });
    expect(() => unwrapToolResult(null, "notes.add_note")).toThrow(
      /notes\.add_note answered with something that is not an MCP tool result/,
    );
  });
});
