/**
 * The parent's side of a storage process test's worker: `node test/storage-processes/worker.ts`
 * forked with its config, asked things over IPC, its events awaited, stopped or killed.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { WorkerConfig, WorkerRequest } from "./worker.ts";

const WORKER = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** A worker process and a way to ask it things. */
export class Worker {
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly events: Array<{ event: string; [key: string]: unknown }> = [];
  private readonly eventWaiters: Array<() => void> = [];
  stderr = "";
  exited = false;

  private constructor(readonly child: ChildProcess) {
    child.stderr?.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.on("message", (message: { id?: number; result?: unknown; error?: string; event?: string }) => {
      if (message.event) {
        this.events.push(message as { event: string });
        for (const wake of this.eventWaiters.splice(0)) wake();
        return;
      }
      const pending = this.waiting.get(message.id!);
      this.waiting.delete(message.id!);
      if (message.error !== undefined) pending?.reject(new Error(`worker failed: ${message.error}`));
      else pending?.resolve(message.result);
    });
    child.on("exit", () => {
      this.exited = true;
      for (const pending of this.waiting.values()) pending.reject(new Error(`worker exited; stderr:\n${this.stderr}`));
      this.waiting.clear();
      for (const wake of this.eventWaiters.splice(0)) wake();
    });
  }

  static async start(config: WorkerConfig): Promise<Worker> {
    const child = fork(WORKER, [JSON.stringify(config)], {
      execArgv: [],
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "json",
    });
    const worker = new Worker(child);
    await worker.event("ready", 20_000);
    return worker;
  }

  ask<T>(request: WorkerRequest): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, request });
    });
  }

  async event(name: string, timeoutMs: number): Promise<{ event: string; [key: string]: unknown }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((event) => event.event === name);
      if (found) return found;
      if (this.exited) throw new Error(`worker exited before "${name}"; stderr:\n${this.stderr}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new Error(`no "${name}" from the worker within ${timeoutMs} ms; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.eventWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await exited;
  }
}
