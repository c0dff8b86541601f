/**
 * The processes of the fleet stories (test/fleet*.test.ts): workers and the approver, forked with
 * an IPC channel so they can say "ready" and the story can kill, freeze or stop them.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { FleetConfig } from "./shared.ts";

const SCRIPTS = {
  worker: fileURLToPath(new URL("./worker.ts", import.meta.url)),
  approver: fileURLToPath(new URL("./approver.ts", import.meta.url)),
};

export interface Child {
  process: ChildProcess;
  stderr: string[];
  message(name: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Every message named `name` received so far. */
  messages(name: string): Array<Record<string, unknown>>;
  stop(signal: NodeJS.Signals): Promise<void>;
}

export function spawn(kind: keyof typeof SCRIPTS, config: FleetConfig): Child {
  const script = SCRIPTS[kind];
  const child = fork(script, [JSON.stringify(config)], {
    execArgv: [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json",
  });
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(...chunk.toString().split("\n").filter(Boolean)));
  const messages: Array<Record<string, unknown>> = [];
  child.on("message", (message: Record<string, unknown>) => messages.push(message));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    process: child,
    stderr,
    messages: (name) => messages.filter((message) => message.event === name),
    async message(name, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find((message) => message.event === name);
        if (found) return found;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${script} ended before "${name}": ${stderr.slice(-5).join("\n")}`);
        if (Date.now() > deadline)
          throw new Error(`no "${name}" from ${script} within ${timeoutMs} ms: ${stderr.slice(-5).join("\n")}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
