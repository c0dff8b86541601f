/**
 * The chaos tests' own store servers: a Redis or a PostgreSQL on a free port, its data in a temp
 * folder, which a test stops cleanly, kills and starts again on the same port and data. Whatever
 * happens to the test, the servers die with its process and their folders are removed.
 *
 * Both keep every acknowledged write through a kill of the server process (not of the machine):
 * Redis appends to its AOF before it answers (`appendfsync always`), PostgreSQL commits to its WAL
 * before it answers (`synchronous_commit` on; `fsync` off, since the OS page cache outlives the process).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

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

/** Why this machine cannot run such a server (a missing binary), or undefined when it can. */
export function serverUnavailable(kind: StoreServer["kind"]): string | undefined {
  try {
    if (kind === "redis") execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    else execFileSync(join(postgresBin(), "postgres"), ["--version"], { stdio: "ignore" });
    return undefined;
  } catch (error) {
    return `cannot run ${kind === "redis" ? "redis-server" : "postgres"}: ${(error as Error).message}`;
  }
}

/** Creates the server's folder (and, for PostgreSQL, its cluster) and starts it. */
export async function startStoreServer(kind: StoreServer["kind"]): Promise<StoreServer> {
  const root = mkdtempSync(join(tmpdir(), `codemode-chaos-${kind}-`));
  // PostgreSQL runs as its own OS user when we are root; it must reach its data directory.
  chmodSync(root, 0o755);
  folders.add(root);
  const port = await freePort();
  const server = kind === "redis" ? redisServer(root, port) : await postgresServer(root, port);
  await server.start();
  return server;
}

/** Every server process alive now, and every folder to remove. */
const serverProcesses = new Set<number>();
const folders = new Set<string>();

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
function managedServer(
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

function redisServer(root: string, port: number): StoreServer {
  const dir = join(root, "data");
  mkdirSync(dir);
  const logFile = join(root, "redis.log");
  const settings = [
    ["port", String(port)],
    ["bind", "127.0.0.1"],
    ["dir", dir],
    ["logfile", logFile],
    ["appendonly", "yes"],
    ["appendfsync", "always"],
    ["save", ""],
    ["maxmemory-policy", "noeviction"],
    ["protected-mode", "no"],
  ];
  const server = managedServer(
    "redis",
    `redis://127.0.0.1:${port}`,
    logFile,
    () =>
      spawn(
        "redis-server",
        settings.flatMap(([name, value]) => [`--${name}`, value as string]),
        { detached: true, stdio: "ignore" },
      ),
    async () => {
      // Fails when the server is already gone; the stop then kills whatever is left.
      execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "shutdown", "nosave"], { stdio: "ignore" });
    },
    () => redisAnswers(port),
  );
  return withRemoval(server, root);
}

/** True once the server answers PING with PONG (not LOADING, not a refused connection). */
function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (chunk) => done(chunk.toString().startsWith("+PONG")));
  });
}

/**
 * The folder of PostgreSQL's binaries: CODEMODE_PG_BIN, else `pg_config --bindir`, else Debian's
 * newest `/usr/lib/postgresql/<version>/bin`.
 */
function postgresBin(): string {
  if (process.env.CODEMODE_PG_BIN) return process.env.CODEMODE_PG_BIN;
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    if (versions[0] === undefined) throw new Error("no PostgreSQL in /usr/lib/postgresql and no pg_config");
    return join("/usr/lib/postgresql", versions[0], "bin");
  }
}

/** PostgreSQL refuses to run as root: as root, its processes run as the `postgres` OS user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

async function postgresServer(root: string, port: number): Promise<StoreServer> {
  const bin = postgresBin();
  const user = postgresUser();
  const dir = join(root, "data");
  mkdirSync(dir, { mode: 0o700 });
  if (user) chownSync(dir, user.uid, user.gid);
  const asUser = { cwd: root, ...(user ?? {}), env: { ...process.env, LC_ALL: "C" } };
  execFileSync(
    join(bin, "initdb"),
    ["-D", dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
    { ...asUser, stdio: "ignore" },
  );
  const logFile = join(root, "postgres.log");
  const settings = [
    ["listen_addresses", "127.0.0.1"],
    ["unix_socket_directories", dir],
    ["fsync", "off"],
    ["full_page_writes", "off"],
    ["max_connections", "400"],
    ["shared_buffers", "64MB"],
  ];
  const server = managedServer(
    "postgres",
    `postgresql://postgres@127.0.0.1:${port}/postgres`,
    logFile,
    () => {
      const log = openSync(logFile, "a");
      try {
        return spawn(
          join(bin, "postgres"),
          ["-D", dir, "-p", String(port), ...settings.flatMap(([name, value]) => ["-c", `${name}=${value}`])],
          { ...asUser, detached: true, stdio: ["ignore", log, log] },
        );
      } finally {
        closeSync(log);
      }
    },
    async () => {
      execFileSync(join(bin, "pg_ctl"), ["stop", "-D", dir, "-m", "fast", "-w", "-t", "30"], {
        ...asUser,
        stdio: "ignore",
      });
    },
    () => postgresAnswers(port),
  );
  return withRemoval(server, root);
}

async function postgresAnswers(port: number): Promise<boolean> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: "postgres",
    database: "postgres",
    connectionTimeoutMillis: 1_000,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `dispose` also removes the server's folder. */
function withRemoval(server: StoreServer, root: string): StoreServer {
  const dispose = server.dispose.bind(server);
  return Object.assign(server, {
    async dispose() {
      await dispose();
      rmSync(root, { recursive: true, force: true });
      folders.delete(root);
    },
  });
}

/** A port nothing listens on now (the OS's pick); the server keeps it across restarts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The promise's value, or `undefined` when it has not settled within `ms` (it goes on unheard). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  // A rejection after the deadline is nobody's to hear; it must not end the process.
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
