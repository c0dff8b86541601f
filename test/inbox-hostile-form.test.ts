import { describe, expect, it } from "vitest";
import { decisionPoster, shopConnector, TOKEN, useInbox } from "./inbox-fixtures.ts";

/**
 * Every field of a decision form is hostile (R-AP-9): the inbox checks each before anything
 * reaches the runtime — seqs, the edit's JSON and its size, the grant, the reason, the body's
 * size, type and shape — and a refusal changes nothing. Over plain HTTP, no browser.
 */

const { serve } = useInbox();

const TWO_ORDERS = `async () => Promise.all([shop.order({ sku: "mug", qty: 1 }), shop.order({ sku: "teapot", qty: 2 })])`;

describe("the inbox's decision form against hostile input", () => {
  it("R-AP-9: refuses malformed seqs, grants, reasons, names and edits with 400, and a body too large or of another type; nothing changes", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const before = await served.runtime.execution(paused.executionId);
    const { post, csrf } = await decisionPoster(served, paused.executionId);
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ seq: "0", decision: "maybe" }, /approve, deny, edit or reject/],
      [{ decision: "approve" }, /needs the "seq"/],
      [{ seq: "", decision: "approve" }, /needs the "seq"/],
      [{ seq: "0", seqs: "0,1", decision: "approve" }, /needs the "seq"/],
      ...["-1", "1.5", "1e0", "0x1", " ", "+1", "99999999999999999999", "1,2"].map(
        (seq): [Record<string, string>, RegExp] => [{ seq, decision: "approve" }, /not the seq of an action|needs the/],
      ),
      [{ seqs: "0,0", decision: "approve" }, /seq 0 is given twice/],
      [{ seqs: "0,1", decision: "edit", args: "{}" }, /"seqs" goes with "approve" or "deny" only/],
      [{ seq: "0", pause: "1.1", decision: "approve" }, /is not the pause of seq 0/],
      [{ seqs: Array.from({ length: 1_001 }, (_, index) => index).join(","), decision: "approve" }, /At most 1000/],
      ...["0", "10001", "1.5", "abc", "-2", "1e3"].map((grant): [Record<string, string>, RegExp] => [
        { seq: "0", decision: "approve", grant },
        /The grant must be a whole number from 1 to 10000/,
      ]),
      [{ seq: "0", decision: "deny", grant: "2" }, /A grant goes with approving or editing one action/],
      [{ seqs: "0,1", decision: "approve", grant: "2" }, /A grant goes with approving or editing one action/],
      [{ seq: "0", decision: "approve", reason: "x".repeat(501) }, /reason is over 500 characters/],
      [{ seq: "0", decision: "approve", by: "x".repeat(81) }, /name is over 80 characters/],
      [{ seq: "0", decision: "edit" }, /An edit needs "args"/],
      [{ seq: "0", decision: "edit", args: "  " }, /An edit needs "args"/],
      [{ seq: "0", decision: "edit", args: "{ sku: mug }" }, /not JSON/],
      [
        { seq: "0", decision: "edit", args: JSON.stringify({ sku: "x".repeat(70_000), qty: 1 }) },
        /over 65,536 characters/,
      ],
    ];
    for (const [fields, expected] of refusals) {
      const refused = await post(fields);
      expect({ fields, status: refused.status }).toEqual({ fields, status: 400 });
      expect(refused.answer).toMatchObject({ ok: false, code: "BAD_REQUEST" });
      expect(String(refused.answer.message)).toMatch(expected);
    }

    const raw = (body: string, contentType: string) =>
      fetch(`${served.base}/executions/${paused.executionId}/decide`, {
        method: "POST",
        headers: { cookie: served.cookie, origin: served.origin, "content-type": contentType },
        body,
      });
    const form = "application/x-www-form-urlencoded";
    const twice = await raw(`csrf=${encodeURIComponent(csrf)}&seq=1&seq=0&decision=approve`, form);
    expect([twice.status, await twice.text()]).toEqual([400, 'the field "seq" is given twice\n']);
    const huge = await raw(`csrf=${encodeURIComponent(csrf)}&seq=0&decision=edit&args=${"%5B".repeat(100_000)}`, form);
    expect(huge.status).toBe(413);
    const plain = await raw(`csrf=${csrf}&seq=0&decision=approve`, "text/plain");
    expect(plain.status).toBe(415);
    for (const body of ["[1]", "not json", "null"]) expect((await raw(body, "application/json")).status).toBe(400);

    expect(ran).toEqual([]);
    expect(await served.runtime.execution(paused.executionId)).toEqual(before);
  });

  it("R-AP-9: the edit form's path checks the origin and the form's value first: a cross-site edit is refused before its body is read", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const { post } = await decisionPoster(served, paused.executionId);
    const fields = { seq: "0", decision: "edit", args: '{"sku":"mug","qty":10}' };
    expect((await post(fields, { origin: "http://evil.example" })).status).toBe(403);
    expect((await post({ ...fields, csrf: "forged" })).status).toBe(403);
    expect(ran).toEqual([]);
  });

  it("R-AP-9: a script with the token decides by JSON: an edit's arguments as a JSON value, the other action still pending", async () => {
    const ran: unknown[] = [];
    const served = await serve({ connectors: [shopConnector(ran)] });
    const paused = await served.runtime.execute({ code: TWO_ORDERS });
    const response = await fetch(`${served.base}/executions/${paused.executionId}/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ seq: 1, decision: "edit", args: { sku: "teapot", qty: 3 }, by: "script" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, status: "paused", pending: [{ seq: 0 }] });
    expect(ran).toEqual([{ sku: "teapot", qty: 3 }]);
  });
});
