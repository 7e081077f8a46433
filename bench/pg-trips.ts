/**
 * `npx tsx bench/pg-trips.ts [tree] [n]`: the statements (round trips) the PostgreSQL store sends
 * for each step of the worker path, counted on the `pg` client (docs/benchmarks.md § End to end,
 * Run PG-4). `tree` is a checkout whose src it loads (default: this one), so an older commit runs
 * its own statements. In a throwaway schema: `n` schedules (default 1000) due at one instant fired
 * by `loop.fireDue()` (batches of 200), then polls of 100 and batched completes of 100 until all are
 * done. Prints one JSON line: queries per fire batch, per poll and per complete batch (BEGIN and
 * COMMIT included) and the milliseconds each step took on average.
 */
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [tree = ".", size = "1000"] = process.argv.slice(2);
const rootDir = resolve(tree);
const root = pathToFileURL(rootDir).href;
const env = await import(`${root}/bench/lib/fire-env.ts`);
const phases = await import(`${root}/bench/lib/fire-phases.ts`);
const { WorkerTasks } = await import(`${root}/src/engine/tasks.ts`);
const { TaskWakeups } = await import(`${root}/src/engine/task-wakeups.ts`);
const { ManualClock } = await import(`${root}/src/clock/manual-clock.ts`);
// The tree's own pg module (a checkout's node_modules is a different module instance).
const pg = createRequire(`${rootDir}/package.json`)("pg");

let queries = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  queries++;
  if (process.env.TRIPS_LOG) {
    const q = args[0] as string | { text: string };
    console.error(queries, (typeof q === "string" ? q : q.text).replace(/\s+/g, " ").slice(0, 90));
  }
  return original.apply(this, args);
};

const n = Number(size);
const e = await env.openPostgres();
if (typeof e === "string") throw new Error(e);
const at = phases.topOfHour(Date.now()) + 5 * phases.HOUR_MS;
await phases.insertViaStore(e, phases.cronRows("trips-", n, at, Date.now()));
const clock = new ManualClock(at + 1000);
const { scheduler, executions, workflows } = await env.wire(e.store, clock, () => undefined);

const fireBatches = Math.ceil(n / 200) + (n % 200 === 0 ? 1 : 0); // a last, empty read when the herd is a multiple
let q0 = queries;
let t0 = performance.now();
const fired = await scheduler.loop.fireDue();
const fire = { queries: queries - q0, ms: performance.now() - t0 };
await scheduler.close();
if (fired !== n) throw new Error(`fired ${fired} of ${n}`);

const tasks = new WorkerTasks({ store: e.store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
const request = {
  worker_id: "trips",
  workflows: [{ name: env.WORKFLOW, version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }],
  max_tasks: 100,
  wait_ms: 0,
};
const holder = { workerId: "trips", identity: null };
await tasks.poll({ ...request, max_tasks: 1 }).then((leased: { task_id: string }[]) =>
  tasks.completeMany(
    holder,
    leased.map((t) => ({ task_id: t.task_id, result: { ok: true } })),
  ),
); // warm-up: the worker's row, the prepared statements
const poll = { n: 0, queries: 0, ms: 0 };
const complete = { n: 0, queries: 0, ms: 0 };
for (;;) {
  q0 = queries;
  t0 = performance.now();
  const leased: { task_id: string }[] = await tasks.poll(request);
  if (!leased.length) break;
  poll.n++;
  poll.queries += queries - q0;
  poll.ms += performance.now() - t0;
  q0 = queries;
  t0 = performance.now();
  const answers = await tasks.completeMany(
    holder,
    leased.map((t) => ({ task_id: t.task_id, result: { ok: true } })),
  );
  complete.n++;
  complete.queries += queries - q0;
  complete.ms += performance.now() - t0;
  for (const a of Object.values(answers) as { status?: string }[]) {
    if (a.status !== "COMPLETED") throw new Error(`a complete was answered ${JSON.stringify(a)}`);
  }
}
await e.close();
const per = (x: { n: number; queries: number; ms: number }) => ({
  queries: +(x.queries / x.n).toFixed(2),
  ms: +(x.ms / x.n).toFixed(1),
});
console.log(
  JSON.stringify({
    tree,
    n,
    fire: { batches: fireBatches, queriesPerBatch: +(fire.queries / fireBatches).toFixed(2), ms: Math.round(fire.ms) },
    poll: { polls: poll.n, ...per(poll) },
    complete: { batches: complete.n, ...per(complete) },
  }),
);
