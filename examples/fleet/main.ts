// The fleet example (`npm run example:fleet`): over one Redis, a web process submits three
// refund runs, three workers run them, an approving process approves each refund — and this
// script SIGKILLs the worker that is inside the first approved refund. BullMQ notices the dead
// worker (its job lock lapses), hands the job to another worker, and the run resumes there from
// its log: the lookup replays, the refund runs again with the same idempotency key (no second
// approval asked), and the run completes.
//
// Needs Redis at $REDIS_URL (default redis://127.0.0.1:6379). Read docs/fleet.md alongside.
import { type ChildProcess, fork } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { REDIS_URL } from "./fleet.ts";

type Message = { event: string } & Record<string, unknown>;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

if (!(await answers(REDIS_URL))) {
  console.error(
    `The fleet example needs Redis at ${REDIS_URL} (set REDIS_URL, or start one: redis-server --daemonize yes).`,
  );
  process.exit(1);
}

const children: ChildProcess[] = [];
function start(
  file: string,
  args: string[],
  onMessage: (message: Message) => void = () => undefined,
): Promise<ChildProcess> {
  const child = fork(here(file), args, { stdio: "inherit" });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.on("message", (message: Message) => {
      if (message.event === "ready") resolve(child);
      onMessage(message);
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`${file} ${args.join(" ")} exited (${signal ?? code}) before it was ready`)),
    );
  });
}

console.log("Starting the approving process and three workers ...");
await start("./approve.ts", []);
const workers = new Map<string, ChildProcess>();
let killed: { workerId: string; executionId: string } | undefined;
const onCall = (message: Message) => {
  if (message.event !== "call" || killed || message.method !== "refund") return;
  const workerId = String(message.workerId);
  killed = { workerId, executionId: String(message.executionId) };
  console.log(
    `\n*** SIGKILL ${workerId}: it is inside billing.refund (approved) of run ${killed.executionId.slice(0, 8)} ***\n`,
  );
  workers.get(workerId)?.kill("SIGKILL");
  workers.delete(workerId);
};
for (const workerId of ["w1", "w2", "w3"]) workers.set(workerId, await start("./worker.ts", [workerId], onCall));

console.log("Submitting three runs from the web process ...\n");
const submitter = fork(here("./submit.ts"), ["alice", "bob", "carol"], { stdio: "inherit" });
children.push(submitter);
const done = new Promise<{ outcomes: Array<{ status: string; executionId: string; result?: Record<string, string> }> }>(
  (resolve, reject) => {
    submitter.on("message", (message: Message) => {
      if (message.event === "done") resolve(message as never);
    });
    submitter.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`submit.ts exited with ${code}`))));
  },
);
const { outcomes } = await done;

const resumed = outcomes.find((outcome) => outcome.executionId === killed?.executionId);
if (killed && resumed?.status === "completed") {
  const calls = resumed.result ?? {};
  console.log(
    `\nRun ${killed.executionId.slice(0, 8)}: ${killed.workerId} was killed inside its refund; the run finished on ${calls.refund}.`,
  );
  console.log(
    `  lookup ran on ${calls.account} (replayed after the kill), refund on ${calls.refund}, note on ${calls.note}.`,
  );
  console.log("  The refund ran twice with one idempotency key: a real payments API dedupes on it (docs/fleet.md).");
} else {
  console.log("\nNo worker was killed this time (the runs finished before a refund started?).");
}

for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
await Promise.all(
  children.map((child) =>
    child.exitCode === null && child.signalCode === null
      ? new Promise((resolve) => child.once("exit", resolve))
      : undefined,
  ),
);

/** Whether a TCP connection to the URL's host and port opens. */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || "127.0.0.1", port: Number(port || 6379) });
    const finish = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once("connect", () => finish(true));
    socket.once("error", () => finish(false));
    socket.setTimeout(1_000, () => finish(false));
  });
}
