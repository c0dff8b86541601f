/**
 * The lifecycle the chaos tests' Redis and PostgreSQL servers share: a spawned process group that
 * a test stops cleanly or kills (every process of its tree at once) and starts again, its
 * readiness, its log. Whatever happens to the test, the servers die with its process and their
 * folders are removed.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { sleep } from "./timing.ts";

export type StopMode = "clean" | "kill";

export interface StoreServer {
  readonly kind: "redis" | "postgres";
  /** What the runtime, BullMQ and the test connect to. */
  readonly url: string;
  /** Starts the server on its port and data; resolves once it answers queries. */
  start(): Promise<void>;
  /**
   * `clean`: `redis-cli shutdown nosave` or `pg_ctl stop -m fast`; `kill`: SIGKILL to every process
   * of the server at once. Resolves once the server process has exited.
   */
  stop(mode: StopMode): Promise<void>;
  /** True between a `start` that answered and the next `stop`. */
  readonly up: boolean;
  /** Kills the server and removes its folder. */
  dispose(): Promise<void>;
  /** The last lines of its log, for failure messages. */
  logTail(lines?: number): string;
}

/** Every server process alive now, and every folder to remove. */
const serverProcesses = new Set<number>();
const folders = new Set<string>();

/** Removes `folder` when the process exits (or when the server it holds is disposed). */
export function removeOnExit(folder: string): void {
  folders.add(folder);
}

function killEverything(): void {
  for (const pid of serverProcesses) killTree(pid);
  serverProcesses.clear();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  folders.clear();
}
process.on("exit", killEverything);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    killEverything();
    process.exit(signal === "SIGINT" ? 130 : 143);
  });

/**
 * SIGKILLs a server process and every process below it, as one: PostgreSQL's backends each lead a
 * process group of their own, so a signal to the postmaster's group would not reach them. Each
 * process is frozen (SIGSTOP) as it is found, and the tree is read again until no new one turns
 * up, so that none forks a child unseen (a backend forked while the tree was read outlived the
 * postmaster, held its shared memory, and the next start failed); then all of them are killed.
 */
function killTree(root: number): number[] {
  const stop = (pid: number) => {
    try {
      process.kill(pid, "SIGSTOP");
    } catch {
      // Already gone.
    }
  };
  const tree = new Set([root]);
  stop(root);
  for (let grown = true; grown; ) {
    grown = false;
    for (const [parent, children] of processChildren())
      if (tree.has(parent))
        for (const child of children)
          if (!tree.has(child)) {
            tree.add(child);
            stop(child);
            grown = true;
          }
  }
  for (const pid of tree) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  return [...tree];
}

/** Resolves once none of `pids` runs any more (gone, or a zombie nobody reaped yet), or after 10 s. */
async function gone(pids: readonly number[]): Promise<void> {
  const running = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 10_000;
  while (pids.some(running) && Date.now() < deadline) await sleep(10);
}

/** Each process's children, read from /proc. */
function processChildren(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name, which is in parentheses and may hold spaces: state, ppid, …
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

/** The lifecycle both kinds share: a spawned process group, its exit, its readiness. */
export function managedServer(
  kind: StoreServer["kind"],
  url: string,
  logFile: string,
  launch: () => ChildProcess,
  cleanStop: () => Promise<void>,
  answers: () => Promise<boolean>,
): StoreServer {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let up = false;
  const logTail = (lines = 15) => {
    try {
      return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  };
  const server: StoreServer = {
    kind,
    url,
    get up() {
      return up;
    },
    logTail,
    async start() {
      if (child) throw new Error(`${kind} is already started`);
      const started = launch();
      const pid = started.pid;
      if (pid === undefined) throw new Error(`${kind} did not start`);
      child = started;
      serverProcesses.add(pid);
      let gone = false;
      exited = new Promise<void>((resolve) =>
        started.once("exit", () => {
          gone = true;
          serverProcesses.delete(pid);
          if (child === started) child = undefined;
          resolve();
        }),
      );
      const deadline = Date.now() + 60_000;
      while (!(await answers())) {
        if (gone) throw new Error(`${kind} exited while starting:\n${logTail()}`);
        if (Date.now() > deadline) throw new Error(`${kind} did not answer within 60 s:\n${logTail()}`);
        await sleep(50);
      }
      up = true;
    },
    async stop(mode) {
      up = false;
      const running = child;
      if (!running?.pid) return;
      // Every process of the tree is gone before the server may start again on its data.
      if (mode === "kill") {
        const tree = killTree(running.pid);
        await exited;
        await gone(tree);
      } else {
        await cleanStop().catch(() => killTree(running.pid as number));
        await exited;
      }
    },
    async dispose() {
      await server.stop("kill");
    },
  };
  return server;
}

/** `dispose` also removes the server's folder. */
export function withRemoval(server: StoreServer, root: string): StoreServer {
  const dispose = server.dispose.bind(server);
  return Object.assign(server, {
    async dispose() {
      await dispose();
      rmSync(root, { recursive: true, force: true });
      folders.delete(root);
    },
  });
}
