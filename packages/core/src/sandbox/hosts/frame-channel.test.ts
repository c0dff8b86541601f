import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { encodeFrame, FramedPipe, FrameReader, SpinPolicy } from "./frame-channel.js";
import { hostEntry } from "./host-entry.js";

describe("frames between a sandbox process and its parent", () => {
  it("R-SB-8: a frame split at every byte comes out once, whole, in order", () => {
    const messages = [
      {
        type: "request",
        pass: 1,
        request: 0,
        body: { type: "call", seq: 0, connector: "crm", method: "get", args: "é\ud800" },
      },
      { type: "result", pass: 1, result: { a: [1, 2n, undefined], limit: Number.POSITIVE_INFINITY } },
    ];
    const bytes = Buffer.concat(messages.map(encodeFrame));
    const reader = new FrameReader();
    const read: unknown[] = [];
    for (let index = 0; index < bytes.length; index++) read.push(...reader.push(bytes.subarray(index, index + 1)));
    expect(read).toEqual(messages);
  });

  it("R-SB-8: several frames in one chunk, and a tail kept for the next one", () => {
    const bytes = Buffer.concat([encodeFrame("one"), encodeFrame("two"), encodeFrame({ three: 3 })]);
    const reader = new FrameReader();
    const cut = bytes.length - 3;
    expect(reader.push(bytes.subarray(0, cut))).toEqual(["one", "two"]);
    expect(reader.push(bytes.subarray(cut))).toEqual([{ three: 3 }]);
  });

  it("R-SB-8: a frame of megabytes read in pipe-sized parts from one reused buffer is joined once, whole", () => {
    const value = JSON.stringify("0:".padEnd(3_000_000, "x"));
    const bytes = Buffer.concat([
      encodeFrame({ type: "pass", pass: 1, request: { replayText: value } }),
      encodeFrame("next"),
    ]);
    const reader = new FrameReader();
    const scratch = Buffer.alloc(65_536);
    const concat = vi.spyOn(Buffer, "concat");
    const read: unknown[] = [];
    try {
      for (let offset = 0; offset < bytes.length; offset += scratch.length) {
        const count = bytes.copy(scratch, 0, offset, offset + scratch.length);
        read.push(...reader.push(scratch.subarray(0, count)));
        scratch.fill(0); // as the next read would overwrite it
      }
      // The pass's frame spans about 46 parts: one join for it, one for the tail's frame at most.
      expect(concat.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      concat.mockRestore();
    }
    expect(read).toEqual([{ type: "pass", pass: 1, request: { replayText: value } }, "next"]);
  });

  it("R-SB-8: a long value reply crosses as its text, unescaped; short ones and lone surrogates as JSON", () => {
    const long = { type: "reply", request: 7, reply: { kind: "value", value: JSON.stringify("é".repeat(5_000)) } };
    const short = { type: "reply", request: 8, reply: { kind: "value", value: '"ok"' } };
    // Not wire text (JSON escapes lone surrogates), but a reply is never cut to fit UTF-8.
    const lone = { type: "reply", request: 9, reply: { kind: "value", value: `${"z".repeat(5_000)}\ud800` } };
    const frames = [long, short, lone].map(encodeFrame);
    expect(frames.map((frame) => frame[4])).toEqual([2, 1, 1]);
    // The value's bytes follow the request number as they are: no escaping, no quotes added.
    expect(frames[0]!.length).toBe(5 + 4 + Buffer.byteLength(long.reply.value));
    const reader = new FrameReader();
    expect(reader.push(Buffer.concat(frames))).toEqual([long, short, lone]);
  });

  it("R-SB-8: a length no writer makes is refused as a pipe out of step, not read as a message", () => {
    const reader = new FrameReader();
    expect(() => reader.push(Buffer.from([0xff, 0xff, 0xff, 0xff, 0]))).toThrow(/out of step/);
    expect(() => new FrameReader().push(Buffer.from([0, 0, 0, 1, 7, 0]))).toThrow(/format 7/);
  });

  it("R-SB-8: spinning is for a machine with a core to spare and replies that come within the budget", () => {
    expect(new SpinPolicy(0.25, 1).shouldSpin).toBe(false);
    expect(new SpinPolicy(0, 4).shouldSpin).toBe(false);
    const policy = new SpinPolicy(0.25, 2);
    expect(policy.shouldSpin).toBe(true);
    policy.replied(5); // a tool doing real I/O: no spinning for the next call
    expect(policy.shouldSpin).toBe(false);
    policy.replied(0.1);
    expect(policy.shouldSpin).toBe(true);
  });

  it("R-SB-8: a child spinning for its replies gets every one, large ones included, in order", async () => {
    const frameChannel = hostEntry("hosts/frame-channel.js").href;
    // The child asks 200 questions, each answered by this side; some answers are larger than a
    // pipe's buffer (the spin reads them in parts, and the event loop takes over when it stops).
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `
        import { Socket } from "node:net";
        const { FramedPipe } = await import(${JSON.stringify(frameChannel)});
        const socket = new Socket({ fd: 3, readable: true, writable: true });
        let spun = 0, asked = 0, answered = [];
        const ask = () => {
          pipe.send({ question: asked++ });
          setImmediate(() => { if (pipe.spinFor(50)) spun++; });
        };
        const pipe = new FramedPipe(socket, (message) => {
          answered.push(message.answer === message.question && message.text.length === message.size);
          if (asked < 200) ask();
          else pipe.send({ done: true, spun, ok: answered.every(Boolean), answers: answered.length });
        }, (error) => { throw error; }, 3);
        ask();
        `,
      ],
      { stdio: ["ignore", "inherit", "inherit", "pipe"] },
    );
    const socket = child.stdio[3] as Socket;
    const summary = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const pipe = new FramedPipe(
        socket,
        (message) => {
          const { question, done } = message as { question?: number; done?: boolean };
          if (done) return resolve(message as Record<string, unknown>);
          const size = question! % 10 === 0 ? 3_000_000 : 20;
          pipe.send({ question, answer: question, size, text: "x".repeat(size) });
        },
        reject,
      );
      child.once("exit", (code) => reject(new Error(`the child ended first (${code})`)));
    });
    child.kill();
    expect(summary).toMatchObject({ ok: true, answers: 200 });
    // Most replies came while the child spun (a loaded machine may put some off past 50 ms).
    expect(summary.spun).toBeGreaterThan(100);
  });
});
