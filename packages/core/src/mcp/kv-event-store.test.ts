import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { KeyvEventStore } from "./kv-event-store.js";

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/message", params: { n } });

async function replay(store: KeyvEventStore, lastEventId: string) {
  const sent: Array<{ eventId: string; message: JSONRPCMessage }> = [];
  const streamId = await store.replayEventsAfter(lastEventId, {
    send: async (eventId, message) => void sent.push({ eventId, message }),
  });
  return {
    streamId,
    sent,
    numbers: sent.map(({ message }) => (message as unknown as { params: { n: number } }).params.n),
  };
}

async function storeMany(store: KeyvEventStore, streamId: string, from: number, to: number) {
  const ids: string[] = [];
  for (let n = from; n <= to; n++) ids.push(await store.storeEvent(streamId, note(n)));
  return ids;
}

describe("KeyvEventStore", () => {
  it("replays the events of the stream stored after an id, in order, with their ids", async () => {
    const store = new KeyvEventStore(new Keyv(), "session-a");
    const ids = await storeMany(store, "_GET_stream", 1, 5);
    await storeMany(store, "other-stream", 100, 101);
    const { streamId, sent, numbers } = await replay(store, ids[1]!);
    expect(streamId).toBe("_GET_stream");
    expect(numbers).toEqual([3, 4, 5]);
    expect(sent.map(({ eventId }) => eventId)).toEqual(ids.slice(2));
    expect(await store.getStreamIdForEventId(ids[0]!)).toBe("_GET_stream");
    expect((await replay(store, ids[4]!)).numbers).toEqual([]);
  });

  it("skips the transport's priming events ({}) on replay", async () => {
    const store = new KeyvEventStore(new Keyv(), "session-a");
    const priming = await store.storeEvent("post-1", {} as JSONRPCMessage);
    await storeMany(store, "post-1", 1, 2);
    expect((await replay(store, priming)).numbers).toEqual([1, 2]);
  });

  it("gives event ids no one can guess: unique, random, and unknown ids are refused", async () => {
    const store = new KeyvEventStore(new Keyv(), "session-a");
    const ids = await storeMany(store, "_GET_stream", 1, 50);
    expect(new Set(ids).size).toBe(50);
    expect(ids[0]).toMatch(/^1\.[\w-]{16}$/);
    expect(await store.getStreamIdForEventId("1")).toBeUndefined();
    expect(await replay(store, "2.guessed")).toEqual({ streamId: "", sent: [], numbers: [] });
  });

  it("keeps at most maxEventsPerStream per stream; resuming from an evicted event is refused, not gappy", async () => {
    const keyv = new Keyv({ store: new Map() });
    const store = new KeyvEventStore(keyv, "session-a", { maxEventsPerStream: 3 });
    const ids = await storeMany(store, "_GET_stream", 1, 10);
    expect(await store.getStreamIdForEventId(ids[6]!)).toBeUndefined();
    expect(await store.getStreamIdForEventId(ids[7]!)).toBe("_GET_stream");
    expect((await replay(store, ids[7]!)).numbers).toEqual([9, 10]);
    // Three events, their three ids, and the stream's seq: nothing else stays behind.
    expect((keyv.store as Map<string, unknown>).size).toBe(7);
  });

  it("forgets everything after ttlMs", async () => {
    const store = new KeyvEventStore(new Keyv(), "session-a", { ttlMs: 40 });
    const ids = await storeMany(store, "_GET_stream", 1, 3);
    expect((await replay(store, ids[0]!)).numbers).toEqual([2, 3]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await store.getStreamIdForEventId(ids[0]!)).toBeUndefined();
    expect((await replay(store, ids[0]!)).sent).toEqual([]);
  });

  it("keeps two sessions apart, though both name their GET stream _GET_stream", async () => {
    const keyv = new Keyv();
    const first = new KeyvEventStore(keyv, "session-a");
    const second = new KeyvEventStore(keyv, "session-b");
    const firstIds = await storeMany(first, "_GET_stream", 1, 3);
    const secondIds = await storeMany(second, "_GET_stream", 11, 13);
    expect((await replay(first, firstIds[0]!)).numbers).toEqual([2, 3]);
    expect((await replay(second, secondIds[0]!)).numbers).toEqual([12, 13]);
    expect(await second.getStreamIdForEventId(firstIds[0]!)).toBeUndefined();
    expect((await replay(second, firstIds[0]!)).sent).toEqual([]);
  });

  it("skips malformed stored events instead of throwing them into the transport", async () => {
    const keyv = new Keyv();
    const store = new KeyvEventStore(keyv, "s", { prefix: "p" });
    const ids = await storeMany(store, "_GET_stream", 1, 6);
    await keyv.set("p:s:e:_GET_stream:2", "not an event");
    await keyv.set("p:s:e:_GET_stream:3", { eventId: "x", message: "{not json" });
    await keyv.set("p:s:e:_GET_stream:4", { eventId: "x", message: JSON.stringify({ hello: "world" }) });
    await keyv.set("p:s:e:_GET_stream:5", { eventId: 5, message: JSON.stringify(note(5)) });
    expect((await replay(store, ids[0]!)).numbers).toEqual([6]);
  });

  it("replays no more than one stream's bound, whatever the stored seqs and positions say", async () => {
    const keyv = new Keyv();
    const store = new KeyvEventStore(keyv, "s", { prefix: "p", maxEventsPerStream: 5 });
    const ids = await storeMany(store, "_GET_stream", 1, 2);
    await keyv.set("p:s:seq:_GET_stream", Number.MAX_SAFE_INTEGER);
    const started = Date.now();
    expect((await replay(store, ids[0]!)).sent).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
    await keyv.set(`p:s:id:${ids[0]}`, { streamId: "_GET_stream", seq: -3 });
    expect(await store.getStreamIdForEventId(ids[0]!)).toBeUndefined();
  });

  it("stores concurrent events under distinct, ordered seqs", async () => {
    const store = new KeyvEventStore(new Keyv(), "s");
    const first = await store.storeEvent("_GET_stream", note(0));
    await Promise.all([1, 2, 3, 4, 5].map((n) => store.storeEvent("_GET_stream", note(n))));
    expect((await replay(store, first)).numbers).toEqual([1, 2, 3, 4, 5]);
  });

  it("still answers an id when the store fails, so the live message goes out; resuming from it is refused", async () => {
    const failing = {
      get: async () => undefined,
      set: async () => Promise.reject(new Error("down")),
      delete: async () => true,
    };
    const store = new KeyvEventStore(failing, "s");
    const eventId = await store.storeEvent("_GET_stream", note(1));
    expect(eventId).toMatch(/^1\./);
    expect(await store.getStreamIdForEventId(eventId)).toBeUndefined();
  });

  it("clear deletes every key the session wrote", async () => {
    const keyv = new Keyv({ store: new Map() });
    const store = new KeyvEventStore(keyv, "s", { maxEventsPerStream: 2 });
    await storeMany(store, "_GET_stream", 1, 5);
    await storeMany(store, "post-1", 1, 1);
    await new KeyvEventStore(keyv, "other").storeEvent("_GET_stream", note(1));
    await store.clear();
    expect([...(keyv.store as Map<string, unknown>).keys()].every((key) => key.includes(":other:"))).toBe(true);
  });

  it("refuses bounds that are not positive", () => {
    expect(() => new KeyvEventStore(new Keyv(), "s", { maxEventsPerStream: 0 })).toThrow(/maxEventsPerStream/);
    expect(() => new KeyvEventStore(new Keyv(), "s", { ttlMs: -1 })).toThrow(/ttlMs/);
  });
});
