import { readFileSync } from "node:fs";

/** Bytes of a memory page, as /proc/<pid>/statm counts them (4 KiB on the platforms Node runs on Linux). */
const PAGE_BYTES = 4096;

/**
 * The resident memory of process `pid` in bytes, read from /proc (Linux), or undefined where
 * there is no /proc or the process is gone. One small synchronous read: cheap enough to take for
 * every sandbox process a few times a second.
 */
export function residentBytes(pid: number | undefined): number | undefined {
  if (pid === undefined || process.platform !== "linux") return undefined;
  try {
    const statm = readFileSync(`/proc/${pid}/statm`, "latin1");
    const resident = Number(statm.split(" ", 2)[1]);
    return Number.isFinite(resident) ? resident * PAGE_BYTES : undefined;
  } catch {
    return undefined;
  }
}

/** Memory a sandbox process may hold beside its passes: Node, the engine, warm sandboxes. */
export const PROCESS_BASE_MB = 384;

/**
 * The resident memory a sandbox process may hold while it runs passes with these memory limits,
 * when `processMemoryMb` does not fix it: its base, plus three times each pass's limit (an
 * isolated-vm heap limit is a guideline a program can overshoot two to three times before V8
 * stops it; QuickJS's memory is exact). A process over it is ended: what the engines could not
 * contain stops here.
 */
export function memoryCapBytes(processMemoryMb: number | undefined, passLimitsMb: Iterable<number>): number {
  if (processMemoryMb !== undefined) return processMemoryMb * 1024 * 1024;
  let megabytes = PROCESS_BASE_MB;
  for (const limit of passLimitsMb) megabytes += 3 * limit;
  return megabytes * 1024 * 1024;
}
