import { describe, expect, it } from "vitest";
import { methodNamesFor } from "./method-names.js";

describe("methodNamesFor (R-CON-5: foreign tool names become method names)", () => {
  it("keeps identifiers and replaces what an identifier cannot hold", () => {
    expect([...methodNamesFor(["search", "get-weather", "fetch.page", "2fa", "$x"])]).toEqual([
      ["search", "search"],
      ["get-weather", "get_weather"],
      ["fetch.page", "fetch_page"],
      ["2fa", "_2fa"],
      ["$x", "$x"],
    ]);
  });

  it("gives a colliding name a numbered suffix; a name that is already an identifier wins", () => {
    expect([...methodNamesFor(["get-weather", "get_weather", "get weather"])]).toEqual([
      ["get-weather", "get_weather_2"],
      ["get_weather", "get_weather"],
      ["get weather", "get_weather_3"],
    ]);
  });

  it("never produces a name that would reach an object's prototype", () => {
    expect(methodNamesFor(["__proto__", "constructor"]).get("__proto__")).toBe("__proto___");
    expect(methodNamesFor(["constructor"]).get("constructor")).toBe("constructor_");
  });
});
