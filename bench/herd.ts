/**
 * `npm run bench:herd -- [tree] [sqlite|postgres] [herds] [n]`: the herd of bench:fire alone, to
 * compare two trees in alternated processes on a shared machine (docs/benchmarks.md, "Before and
 * after issues 10–16"). `tree` is a checkout whose bench/lib it loads (default: this one), so an
 * older commit's worktree runs its own firing path; each herd is a fresh database of `n` hourly
 * cron schedules (default 10,000) due at one instant, fired by `loop.fireDue()`. Prints one JSON
 * line: fires per second of wall time and per second of this process's CPU time (user + system;
 * steadier than wall time when other processes load the machine). `PROFILE=<prefix>` writes a CPU
 * profile of each herd (not of its inserts) to `<prefix>.<k>.cpuprofile`, and with `BENCH_HERD_DRAIN=1`
 * one of each drain to `<prefix>.drain.<i>.cpuprofile`.
 * `BENCH_HERD_ROUNDS=r` fires each herd r times, an hour apart, every execution completed (through
 * the Store) between two: the later rounds are a steady herd, whose schedules have a last execution
 * to read (`steadyPerS`, `steadyPerCpuS`, one figure per round; docs/benchmarks.md § Firing).
 * `BENCH_HERD_DRAIN=1`: after each round's fire, the executions are run as a worker's would be, through
 * the server's worker-protocol engine without HTTP (`WorkerTasks.claim` of 100, then `completeMany` of
 * those 100, until none is left): `drainPerCpuS`, executions leased and completed per second of CPU,
 * one figure per round; the server's work per execution after the fire (docs/benchmarks.md § End to end, Run I).
 * `BENCH_HERD_WAL=1` (SQLite): prints to stderr, per round, the pages its fire (and drain) wrote to
 * the WAL per table and index, a page once per commit that wrote it (docs/benchmarks.md, Run O).
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Store } from "../src/store/store.js";

const [tree = ".", dialect = "sqlite", herds = "3", size = "10000"] = process.argv.slice(2);
const root = pathToFileURL(resolve(tree)).href;
const env = await import(`${root}/bench/lib/fire-env.ts`);
const phases = await import(`${root}/bench/lib/fire-phases.ts`);
const prefix = process.env.PROFILE;
const session = prefix ? new Session() : null;
if (session) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
}
const n = Number(size);
const rounds = Number(process.env.BENCH_HERD_ROUNDS ?? 1);
const perS: number[] = [];
const perCpuS: number[] = [];
const steadyPerS: number[] = [];
const steadyPerCpuS: number[] = [];
const drainPerCpuS: number[] = [];
const drain = process.env.BENCH_HERD_DRAIN === "1";
const countWal = process.env.BENCH_HERD_WAL === "1";
let drains = 0;
for (let k = 0; k < Number(herds); k++) {
  const e = dialect === "sqlite" ? await env.openSqlite() : await env.openPostgres();
  if (typeof e === "string") throw new Error(e);
  const at = phases.topOfHour(Date.now()) + 5 * phases.HOUR_MS;
  await phases.insertViaStore(e, phases.cronRows("herd-", n, at, Date.now()));
  for (let round = 0; round < rounds; round++) {
    const due = at + round * phases.HOUR_MS;
    if (round > 0 && !drain) await completeAll(e.store, due);
    const wal = countWal ? e.raw.walPages : undefined;
    wal?.begin();
    if (session) await session.post("Profiler.start");
    const cpu0 = process.cpuUsage();
    const r = await phases.herdRun(e, due);
    const cpu = process.cpuUsage(cpu0);
    if (session) {
      const profile = (await session.post("Profiler.stop")).profile;
      writeFileSync(`${prefix}.${k}${round > 0 ? `.${round}` : ""}.cpuprofile`, JSON.stringify(profile));
    }
    if (r.fired !== n) throw new Error(`fired ${r.fired} of ${n}`);
    (round === 0 ? perS : steadyPerS).push(Math.round(r.firesPerSecond));
    (round === 0 ? perCpuS : steadyPerCpuS).push(Math.round(r.fired / ((cpu.user + cpu.system) / 1e6)));
    if (drain) drainPerCpuS.push(await drainAll(e.store, due + 2000));
    if (wal) {
      const pages = wal.end();
      const all = [...pages.values()].reduce((a, b) => a + b, 0);
      console.error(JSON.stringify({ round: round + 1, all, ...Object.fromEntries(pages) }));
    }
  }
  await e.close();
}
console.log(
  JSON.stringify({
    tree,
    dialect,
    perS,
    perCpuS,
    ...(rounds > 1 ? { steadyPerS, steadyPerCpuS } : {}),
    ...(drain ? { drainPerCpuS } : {}),
  }),
);

/** Leases and completes every pending task as one worker of 100 slots would; executions per CPU second. */
async function drainAll(store: Store, atMs: number): Promise<number> {
  const { ManualClock } = await import(`${root}/src/clock/manual-clock.ts`);
  const { WorkerTasks } = await import(`${root}/src/engine/tasks.ts`);
  const { TaskWakeups } = await import(`${root}/src/engine/task-wakeups.ts`);
  const clock = new ManualClock(atMs);
  const { workflows, executions, scheduler } = await env.wire(store, clock, () => {});
  const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
  const offer = { name: env.WORKFLOW, version: "1.0.0", max_attempts: 1, backoff_ms: 1000 };
  const holder = { workerId: "bench-worker", identity: null };
  let done = 0;
  if (session) await session.post("Profiler.start");
  const cpu0 = process.cpuUsage();
  for (;;) {
    const leased = await tasks.claim({ worker_id: holder.workerId, workflows: [offer], max_tasks: 100 });
    if (!leased.length) break;
    await tasks.completeMany(
      holder,
      leased.map((t: { task_id: string }) => ({ task_id: t.task_id, result: { ok: true } })),
    );
    done += leased.length;
  }
  const cpu = process.cpuUsage(cpu0);
  if (session)
    writeFileSync(
      `${prefix}.drain.${drains++}.cpuprofile`,
      JSON.stringify((await session.post("Profiler.stop")).profile),
    );
  await scheduler.close();
  if (done !== n) throw new Error(`drained ${done} of ${n}`);
  return Math.round(done / ((cpu.user + cpu.system) / 1e6));
}

/** Completes every running execution, as a worker would have before the next occurrence. */
async function completeAll(store: Store, endedMs: number): Promise<void> {
  const running = await store.listExecutions({ status: "RUNNING", limit: n + 1 });
  await store.transaction(async (tx) => {
    for (const x of running) await tx.updateExecution(x.executionId, { status: "COMPLETED", endedMs });
  });
}
