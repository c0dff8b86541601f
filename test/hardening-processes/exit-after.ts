/**
 * A host process for test/hardening-exit.test.ts, importing the BUILT packages (run
 * `npm run build` first). It brings a runtime to one situation and then calls `process.exit(0)`
 * at once; the parent counts the runs that do not end in time (R-RT-5).
 *
 *   node test/hardening-processes/exit-after.ts pause|expiry|close|close-intl|idle [threads]
 *
 * With `threads`, passes run on two sandbox threads (`sandboxThreads: 2`). `idle` pauses a run and
 * then neither closes nor exits: the process must end by itself, as nothing is left to do.
 */
import { createCodemodeRuntime, defineConnector } from "@codemode/core";

const situation = process.argv[2];
const threads = process.argv[3] === "threads" ? { sandboxThreads: 2 } : {};
const shop = defineConnector({
  name: "shop",
  tools: {
    buy: { requiresApproval: true, execute: async () => ({ ok: true }) },
    look: { execute: async () => ({ price: 3 }) },
  },
});
const runtime = createCodemodeRuntime({ connectors: [shop], limits: { timeoutMs: 30_000 }, ...threads });
// A run halted while awaiting: the approval-gated call never settles in the sandbox.
const pausing = "async () => { const { price } = await shop.look({}); await shop.buy({ price }); return 'bought'; }";

if (situation === "idle") {
  const outcome = await runtime.execute({ code: pausing });
  process.exitCode = outcome.status === "paused" ? 0 : 3;
} else if (situation === "pause") {
  const outcome = await runtime.execute({ code: pausing });
  if (outcome.status !== "paused") process.exit(3);
} else if (situation === "expiry") {
  const outcome = await runtime.execute({ code: pausing });
  if (outcome.status !== "paused") process.exit(3);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const expired = await runtime.expirePaused({ maxAgeMs: 1 });
  if (!expired.includes(outcome.executionId)) process.exit(4);
} else if (situation === "close") {
  // One run paused, one still awaiting a promise that never settles when close() comes.
  const paused = await runtime.execute({ code: pausing });
  if (paused.status !== "paused") process.exit(3);
  const hanging = runtime.execute({ code: "async () => { await shop.look({}); await new Promise(() => {}); }" });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await runtime.close();
  void hanging;
} else if (situation === "close-intl") {
  // isolated-vm tears a disposed isolate down on a later turn of the event loop: exiting before
  // that, once a program had used Intl, segfaulted a few times in a hundred.
  const bare = createCodemodeRuntime({ ...threads });
  // QuickJS has no Intl: there the program uses the locale methods it has.
  const code =
    process.env.CODEMODE_EXECUTOR === "quickjs"
      ? "async () => [new Date(0).toLocaleString('en-US'), (1234.5).toLocaleString('en-US')]"
      : "async () => { const formatter = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'medium' }); return [formatter.format(), new Date(0).toLocaleString('en-US')]; }";
  const done = await bare.execute({ code });
  if (done.status !== "completed") process.exit(3);
  await bare.execution(done.executionId);
  await bare.close();
  await runtime.close();
  // What an application does next, before it exits: a log line (the crash window was right there).
  process.stdout.write(`${JSON.stringify(done.result)}\n`);
} else {
  process.exit(5);
}
if (situation !== "idle") process.exit(0);
