import { describe, expect, it } from "vitest";
import { defineConnector } from "../connectors/define-connector.js";
import { modelDescription } from "./model-description.js";

/** The text every adapter sends as the Code Mode tool's description (R-AI-2). */

const shop = defineConnector({
  name: "shop",
  instructions: "Places orders; every order needs a human's approval.",
  tools: {
    create_order: { description: "Order a quantity of one product.", requiresApproval: true, execute: () => "ordered" },
    list_orders: { description: "Orders placed so far.", execute: () => [] },
  },
});
const mail = defineConnector({ name: "mail", tools: { send: { requiresApproval: true, execute: () => "sent" } } });

describe("modelDescription (R-AI-2)", () => {
  it("R-AI-2: one connector fits in about 800 characters and still explains search, describe, step, pauses and sequential calls", () => {
    const text = modelDescription([shop]);
    expect(text.length).toBeLessThanOrEqual(800);
    for (const phrase of [
      "- shop: Places orders; every order needs a human's approval. Methods: create_order, list_orders.",
      "codemode.search",
      "codemode.describe",
      "codemode.step",
      "paused",
      "do not re-issue",
      "one at a time",
      "codemode.run",
    ]) {
      expect(text).toContain(phrase);
    }
  });

  it("its examples call a method the connectors really have, preferring one that needs no approval", () => {
    const text = modelDescription([shop]);
    expect(text).toContain("await shop.list_orders({ … })");
    expect(text).toContain('codemode.describe("shop.list_orders")');
    expect(text).not.toContain("github");
    // Only gated methods: the example still names a real one.
    expect(modelDescription([mail])).toContain("await mail.send({ … })");
  });

  it("with no connector, the example searches instead of naming a method that does not exist", () => {
    const text = modelDescription([]);
    expect(text).toContain("- (none configured)");
    expect(text).toContain('return await codemode.search("what you need");');
    expect(text).not.toMatch(/\b\w+\.\w+\(\{ … \}\)/);
  });

  it("hints join their connector's line; allowNetwork mentions fetch", () => {
    const text = modelDescription([shop, mail], { hints: { mail: "Only to colleagues." }, allowNetwork: true });
    expect(text).toContain("- mail: Only to colleagues. Methods: send.");
    expect(text).toContain("time, randomness and fetch");
    expect(text).toContain("except fetch");
  });

  it("long method lists are cut after twelve, with a count", () => {
    const tools = Object.fromEntries(Array.from({ length: 15 }, (_, index) => [`m${index}`, { execute: () => index }]));
    expect(modelDescription([defineConnector({ name: "many", tools })])).toContain("m11, … (3 more).");
  });
});
