/**
 * How many large programs this process reads at once. Reading a large program costs memory that
 * `memoryMb` does not count: the host's parse tree (normalizeCode, acorn and the TypeScript
 * stripper) and V8's own parse and compile of it in the isolate. A 0.9 MB program of 160,000
 * names costs about 230 MB while it is read. Passes on several sandbox threads (`sandboxThreads`)
 * used to read that many at once, so large programs take turns across every thread of the
 * process: one shared counter, in a SharedArrayBuffer the threads are given. A turn lasts from
 * the host's parse until V8 has compiled the program (its first synchronous run). Small
 * programs, the usual case, never wait.
 */

/** Programs longer than this (in characters) take turns to be read. */
export const LARGE_PROGRAM_CHARS = 100_000;
/** Large programs read at the same time, per process. */
export const LARGE_READS_AT_ONCE = 1;

/** The process's counter: made by the first thread that asks, handed to sandbox threads in their workerData. */
let shared: SharedArrayBuffer | undefined;

/** The counter this thread uses; a sandbox thread adopts the one its parent gave it (`adoptReadingGate`). */
export function readingGateBuffer(): SharedArrayBuffer {
  shared ??= new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * 2);
  return shared;
}

/** Called by a sandbox thread with the buffer of the thread that started it. */
export function adoptReadingGate(buffer: SharedArrayBuffer | undefined): void {
  if (buffer) shared = buffer;
}

/**
 * Waits for a turn to read a program of `chars` characters, until `deadline` (epoch ms). Resolves
 * with the function that ends the turn (a no-op for a small program; calling it twice is
 * harmless), or null when the deadline passed first.
 */
export async function takeReadingTurn(chars: number, deadline: number): Promise<(() => void) | null> {
  if (chars <= LARGE_PROGRAM_CHARS) return () => undefined;
  const counter = new Int32Array(readingGateBuffer());
  for (;;) {
    const readers = Atomics.load(counter, 0);
    if (readers < LARGE_READS_AT_ONCE && Atomics.compareExchange(counter, 0, readers, readers + 1) === readers) {
      // The most readers ever seen at once, for the tests of this bound.
      const most = Atomics.load(counter, 1);
      if (readers + 1 > most) Atomics.compareExchange(counter, 1, most, readers + 1);
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        Atomics.sub(counter, 0, 1);
        Atomics.notify(counter, 0);
      };
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) return null;
    const waited = Atomics.waitAsync(counter, 0, readers, remaining);
    if (waited.async) await waited.value;
  }
}

/** The most large programs this process has read at once (0 before the first). */
export function mostReadAtOnce(): number {
  return Atomics.load(new Int32Array(readingGateBuffer()), 1);
}
