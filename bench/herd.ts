/**
 * `npm run bench:herd -- [tree] [sqlite|postgres] [herds] [n]`: the herd of bench:fire alone, to
 * compare two trees in alternated processes on a shared machine (docs/benchmarks.md, "Before and
 * after issues 10–16"). `tree` is a checkout whose bench/lib it loads (default: this one), so an
 * older commit's worktree runs its own firing path; each herd is a fresh database of `n` hourly
 * cron schedules (default 10,000) due at one instant, fired by `loop.fireDue()`. Prints one JSON
 * line: fires per second of wall time and per second of this process's CPU time (user + system;
 * steadier than wall time when other processes load the machine). `PROFILE=<prefix>` writes a CPU
 * profile of each herd (not of its inserts) to `<prefix>.<k>.cpuprofile`.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

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
const perS: number[] = [];
const perCpuS: number[] = [];
for (let k = 0; k < Number(herds); k++) {
  const e = dialect === "sqlite" ? await env.openSqlite() : await env.openPostgres();
  if (typeof e === "string") throw new Error(e);
  const at = phases.topOfHour(Date.now()) + 5 * phases.HOUR_MS;
  await phases.insertViaStore(e, phases.cronRows("herd-", n, at, Date.now()));
  if (session) await session.post("Profiler.start");
  const cpu0 = process.cpuUsage();
  const r = await phases.herdRun(e, at);
  const cpu = process.cpuUsage(cpu0);
  if (session)
    writeFileSync(`${prefix}.${k}.cpuprofile`, JSON.stringify((await session.post("Profiler.stop")).profile));
  if (r.fired !== n) throw new Error(`fired ${r.fired} of ${n}`);
  perS.push(Math.round(r.firesPerSecond));
  perCpuS.push(Math.round(r.fired / ((cpu.user + cpu.system) / 1e6)));
  await e.close();
}
console.log(JSON.stringify({ tree, dialect, perS, perCpuS }));
