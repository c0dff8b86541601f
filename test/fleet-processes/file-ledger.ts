/**
 * The ledger in a folder, for stories that stop and kill the store (test/chaos/): the truth about
 * attempts, effects and approvals must outlive the server being restarted. Every process of the
 * fleet opens the same folder:
 *
 * - `effects/<key>` and `approvals/<key>`: created exclusively (O_EXCL), so of two processes
 *   applying the same key the first one wins, as a payment API deduping on it would;
 * - `attempts/<workerId>.<pid>.jsonl`: one line per attempt, appended by that process alone.
 */
import { appendFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Recorded } from "./backends.ts";
import type { Ledger } from "./shared.ts";

export async function openFileLedger(folder: string, workerId: string): Promise<Ledger> {
  for (const part of ["effects", "approvals", "attempts"]) await mkdir(join(folder, part), { recursive: true });
  const attempts = join(folder, "attempts", `${workerId}.${process.pid}.jsonl`);
  /** True when this call created the file; false when it existed. */
  const createOnce = async (path: string, text: string) => {
    try {
      await writeFile(path, text, { flag: "wx" });
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === "EEXIST") return false;
      throw error;
    }
  };
  return {
    attempt: (key, worker, gated) =>
      appendFile(attempts, `${JSON.stringify({ key, worker, gated, at: Date.now() })}\n`),
    effect: (key, worker) => createOnce(join(folder, "effects", key), JSON.stringify({ worker, at: Date.now() })),
    approval: async (key) => void (await createOnce(join(folder, "approvals", key), String(Date.now()))),
    close: async () => undefined,
  };
}

/** What the ledger in `folder` recorded. */
export async function readFileLedger(folder: string): Promise<Recorded> {
  const attempts: Recorded["attempts"] = [];
  for (const name of await readdir(join(folder, "attempts"))) {
    for (const line of (await readFile(join(folder, "attempts", name), "utf8")).split("\n")) {
      // A process killed mid-append may leave a partial last line; its attempt did not get further.
      if (!line.trim()) continue;
      try {
        attempts.push(JSON.parse(line) as Recorded["attempts"][number]);
      } catch {
        // Partial line.
      }
    }
  }
  const effects: Recorded["effects"] = new Map();
  for (const key of await readdir(join(folder, "effects"))) {
    // A process killed between creating the file and writing it leaves it empty: the effect happened.
    const text = await readFile(join(folder, "effects", key), "utf8");
    effects.set(key, text ? (JSON.parse(text) as { worker: string; at: number }) : { worker: "?", at: 0 });
  }
  const approvals: Recorded["approvals"] = new Map();
  for (const key of await readdir(join(folder, "approvals")))
    approvals.set(key, Number(await readFile(join(folder, "approvals", key), "utf8")));
  return { attempts, effects, approvals };
}
