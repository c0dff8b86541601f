import { createCipheriv, createHash } from "node:crypto";

/**
 * Randomness that is the same on every pass of an execution yet cannot be recomputed without its
 * secret seed (R-SB-6, issue 17.10): an AES-256-CTR keystream keyed by a hash of the seed. Each
 * pass starts the stream from its beginning, so the program draws the same bytes in the same
 * order every time.
 */
export function keyedByteStream(secretSeed: string): (count: number) => Buffer {
  const key = createHash("sha256").update(`codemode crypto\0${secretSeed}`).digest();
  const cipher = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
  return (count) => cipher.update(Buffer.alloc(count));
}

/** The seed of the sandbox's `Math.random` for a keyed execution: derived, so it reveals nothing of the secret. */
export function mathRandomSeed(secretSeed: string): string {
  return createHash("sha256").update(`codemode Math.random\0${secretSeed}`).digest("base64url");
}
