/**
 * The host modes bench/hosts.bench.ts measures (where a runtime runs its passes, R-SB-8), shared
 * by its rows measured here and by its child processes (bench/hosts-in-flight.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "@codemode/core";
import { check } from "./harness.ts";

/**
 * Each host mode: how a row names it, its line in the "host modes" plot, and the runtime options
 * that choose it (`sandboxHost`, `executor`).
 */
export const HOST_MODES = {
  process: {
    label: "process host (the default, 2 sandbox processes), isolated-vm",
    line: "process host, isolated-vm",
    options: { sandboxHost: "process", executor: "isolated-vm" },
  },
  thread: {
    label: "thread host (2 sandbox threads), isolated-vm",
    line: "thread host, isolated-vm",
    options: { sandboxHost: "thread", executor: "isolated-vm" },
  },
  inline: {
    label: "inline host (the runtime's thread), isolated-vm",
    line: "inline host, isolated-vm",
    options: { sandboxHost: "inline", executor: "isolated-vm" },
  },
  processQuickJs: {
    label: "process host (2 sandbox processes), QuickJS",
    line: "process host, QuickJS",
    options: { sandboxHost: "process", executor: "quickjs" },
  },
} satisfies Record<
  string,
  { label: string; line: string; options: Pick<CodemodeRuntimeOptions, "sandboxHost" | "executor"> }
>;

export type HostMode = keyof typeof HOST_MODES;
export const MODES = Object.keys(HOST_MODES) as HostMode[];
/** The host the targets are for (the default) and the host they are held against. */
export const DEFAULT_HOST: HostMode = "process";
export const IN_PROCESS_HOST: HostMode = "inline";

/** Whether a mode runs its passes in sandbox processes (children of the runtime's process). */
export const inSandboxProcesses = (mode: HostMode) => HOST_MODES[mode].options.sandboxHost === "process";

/** A runtime of one host mode, through the runtime's own choice of executor (what a user gets). */
export function hostRuntime(
  mode: HostMode,
  connectors: CodemodeRuntimeOptions["connectors"],
  extra: Partial<CodemodeRuntimeOptions> = {},
): CodemodeRuntime {
  return createCodemodeRuntime({ connectors, maxExecutions: 20, ...extra, ...HOST_MODES[mode].options });
}

/** Fails loudly when a runtime did not run the host and sandbox it was asked for (a fallback, a stale build). */
export function checkHost(runtime: CodemodeRuntime, mode: HostMode): void {
  const { sandbox, sandboxHost } = runtime.load();
  const { options } = HOST_MODES[mode];
  check(
    sandbox === options.executor && sandboxHost === options.sandboxHost,
    `${HOST_MODES[mode].label} ran on ${sandboxHost}, ${sandbox}`,
  );
}

/** Resident memory of this process and of the processes descended from it (its sandbox processes). */
export interface Resident {
  selfBytes: number;
  childBytes: number;
  /** Processes descended from this one. */
  processes: number;
}

/**
 * Reads the resident memory of this process and of every process below it from /proc (Linux; 0
 * elsewhere). Children are found by their parent's pid in /proc/<pid>/stat, which needs no
 * kernel option (unlike /proc/<pid>/task/<tid>/children).
 */
export function residentMemory(): Resident {
  const parents = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    // Not Linux: this process only.
  }
  for (const name of entries) {
    const parent = parentOf(Number(name));
    if (parent === undefined) continue;
    const siblings = parents.get(parent);
    if (siblings) siblings.push(Number(name));
    else parents.set(parent, [Number(name)]);
  }
  const descendants: number[] = [];
  const queue = [...(parents.get(process.pid) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    descendants.push(pid);
    queue.push(...(parents.get(pid) ?? []));
  }
  const childBytes = descendants.reduce((sum, pid) => sum + (residentBytesOf(pid) ?? 0), 0);
  return { selfBytes: process.memoryUsage.rss(), childBytes, processes: descendants.length };
}

function parentOf(pid: number): number | undefined {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: the parent pid is the
    // second field after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

function residentBytesOf(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
