import { describe, expect, it } from "vitest";
import { arrayOf, intersectionOf, literalType, NEVER, type TypeText, UNKNOWN, unionOf } from "./type-text.js";

const primary = (text: string): TypeText => ({ text, precedence: "primary" });
const string = primary("string");
const number = primary("number");
const boolean = primary("boolean");

describe("unionOf and intersectionOf", () => {
  it("lets unknown absorb a union and never absorb an intersection", () => {
    expect(unionOf([string, UNKNOWN, NEVER])).toBe(UNKNOWN);
    expect(intersectionOf([string, NEVER, UNKNOWN])).toBe(NEVER);
  });

  it("drops never from a union and unknown from an intersection, down to the neutral one when nothing is left", () => {
    expect(unionOf([string, NEVER])).toBe(string);
    expect(unionOf([NEVER, NEVER])).toBe(NEVER);
    expect(unionOf([])).toBe(NEVER);
    expect(intersectionOf([UNKNOWN, number])).toBe(number);
    expect(intersectionOf([UNKNOWN])).toBe(UNKNOWN);
    expect(intersectionOf([])).toBe(UNKNOWN);
  });

  it("flattens nested members of the same kind and writes each distinct member once", () => {
    const union = unionOf([unionOf([string, number]), string, boolean]);
    expect(union).toEqual({
      text: "string | number | boolean",
      precedence: "union",
      members: [string, number, boolean],
    });
    const intersection = intersectionOf([intersectionOf([primary("A"), primary("B")]), primary("A"), primary("C")]);
    expect(intersection.text).toBe("A & B & C");
    expect(intersection.precedence).toBe("intersection");
  });

  it("parenthesises a union inside an intersection, and nothing inside a union", () => {
    const union = unionOf([string, number]);
    const intersection = intersectionOf([primary("A"), primary("B")]);
    expect(intersectionOf([union, boolean]).text).toBe("(string | number) & boolean");
    expect(unionOf([intersection, boolean]).text).toBe("A & B | boolean");
    // A union without its members is a member of its own, and still needs no parentheses in a union.
    expect(unionOf([{ text: "x | y", precedence: "union" }, boolean]).text).toBe("x | y | boolean");
  });
});

describe("literalType and arrayOf", () => {
  it("writes literals, and parenthesises a negative number or a union as an array element", () => {
    expect(literalType(-1)).toEqual({ text: "-1", precedence: "intersection" });
    expect(arrayOf(literalType(-1)).text).toBe("(-1)[]");
    expect(arrayOf(unionOf([string, number])).text).toBe("(string | number)[]");
    expect(literalType({}).text).toBe("{ [key: string]: never }");
    expect(literalType(Number.NaN)).toBe(UNKNOWN);
  });
});
