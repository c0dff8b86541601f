import { describe, expect, it } from "vitest";
import { parseRequest } from "./parse-request.js";

describe("parseRequest: the host's check of what the sandbox sends", () => {
  it("takes a call's arguments from beside the request, unquoted", () => {
    expect(parseRequest('{"type":"call","seq":3,"connector":"shop","method":"read"}', '{"id":1}')).toEqual({
      ok: true,
      request: { type: "call", seq: 3, connector: "shop", method: "read", args: '{"id":1}' },
    });
  });

  it("still reads arguments inside the request", () => {
    expect(parseRequest('{"type":"service","name":"search","args":"[\\"x\\"]"}')).toEqual({
      ok: true,
      request: { type: "service", name: "search", args: '["x"]' },
    });
  });

  it("refuses arguments given twice, arguments that are not text, and a call without any", () => {
    expect(parseRequest('{"type":"call","seq":0,"connector":"a","method":"b","args":"1"}', "2")).toEqual({
      ok: false,
      message: "malformed request",
    });
    expect(parseRequest('{"type":"call","seq":0,"connector":"a","method":"b"}', 7)).toEqual({
      ok: false,
      message: "malformed request",
    });
    expect(parseRequest('{"type":"call","seq":0,"connector":"a","method":"b"}')).toEqual({
      ok: false,
      message: "malformed request",
    });
  });

  it("refuses oversized text beside the request before reading it", () => {
    expect(
      parseRequest('{"type":"call","seq":0,"connector":"a","method":"b"}', "x".repeat(64 * 1024 * 1024 + 1)),
    ).toEqual({ ok: false, message: "the request is too large" });
  });
});
