/**
 * `npm run chaos -- --servers 3 --minutes 10 --mode shared|active-standby [--pg-outage 20]`
 *
 * Several Orbit servers on one PostgreSQL database (a fresh schema per run), a worker per server,
 * and a mix of 1-2 s schedules covering every overlap and catch-up policy. Servers are killed with
 * SIGKILL and restarted at random; with --pg-outage S, PostgreSQL itself is stopped for S seconds
 * (always started again). At the end the ledger is checked from the database: every occurrence of
 * the run started exactly once or was recorded as skipped with a reason. Exit code 1 on a violation.
 *
 * Other flags: --grace S (misfire grace, default 5 s, so outages produce missed occurrences),
 * --kill-every S (mean seconds between kills, default 15), --database URL (default
 * ORBIT_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test), --keep (keep the schema),
 * --log-dir DIR (server logs; default a temp folder).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { OrbitClient } from "../../src/client/client.js";
import { Worker } from "../../src/index.js";
import type { ClusterMode } from "../../src/server/options.js";
import { checkLedger, type LedgerSummary } from "./ledger.js";
import { ServerProcess } from "./procs.js";
import { CHAOS_SCHEDULES, ChaosNoop, WORKFLOW } from "./schedules.js";

const { values: args } = parseArgs({
  options: {
    servers: { type: "string", default: "3" },
    minutes: { type: "string", default: "2" },
    mode: { type: "string", default: "shared" },
    "pg-outage": { type: "string" },
    grace: { type: "string", default: "5" },
    "kill-every": { type: "string", default: "15" },
    database: { type: "string" },
    keep: { type: "boolean", default: false },
    "log-dir": { type: "string" },
  },
});

const MODE = args.mode as ClusterMode;
if (MODE !== "shared" && MODE !== "active-standby") throw new Error("--mode must be shared or active-standby");
const SERVERS = Number(args.servers);
const RUN_MS = Number(args.minutes) * 60_000;
const OUTAGE_MS = args["pg-outage"] === undefined ? 0 : Number(args["pg-outage"]) * 1000;
const GRACE_MS = Number(args.grace) * 1000;
const KILL_EVERY_MS = Number(args["kill-every"]) * 1000;
const DATABASE = args.database ?? (process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test");
const SCHEMA = `orbit_chaos_${randomBytes(4).toString("hex")}`;
const LOG_DIR = args["log-dir"] ?? mkdtempSync(join(tmpdir(), "orbit-chaos-"));

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
const say = (msg: string) => console.log(`[chaos ${elapsed()}] ${msg}`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

async function admin<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: DATABASE, options: `-c search_path=${SCHEMA}` });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

// PostgreSQL control (the local cluster of this machine).
function pgCtl(action: "stop" | "start"): void {
  const version = readdirSync("/etc/postgresql")[0];
  if (version === undefined) throw new Error("no PostgreSQL cluster under /etc/postgresql");
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", action], { stdio: "inherit" });
}

async function waitForDatabase(): Promise<void> {
  for (let i = 0; i < 60; i++) {
    try {
      await admin("SELECT 1");
      return;
    } catch {
      await sleep(500);
    }
  }
  throw new Error("PostgreSQL did not come back within 30 s");
}

interface Stats {
  kills: number;
  leaderKills: number;
  unexpectedExits: number;
  /** Active-standby: ms from killing the leader to the next execution created by anyone. */
  failovers: number[];
  outage: { stoppedMs: number; downMs: number; firstFireAfterMs: number | null; serversUp: number } | null;
}

async function newestExecutionMs(): Promise<number> {
  const rows = await admin<{ t: string | null }>("SELECT max(created_ms) AS t FROM orbit_executions");
  return Number(rows[0]?.t ?? 0);
}

/** ms from `since` until an execution created after it appears (null after `limitMs`). */
async function timeToNextFire(since: number, limitMs = 30_000): Promise<number | null> {
  while (Date.now() - since < limitMs) {
    try {
      const t = await newestExecutionMs();
      if (t > since) return t - since;
    } catch {
      // the database is restarting
    }
    await sleep(100);
  }
  return null;
}

async function main(): Promise<void> {
  say(
    `mode ${MODE}, ${SERVERS} servers, ${args.minutes} min, grace ${GRACE_MS / 1000} s, kill every ~${KILL_EVERY_MS / 1000} s` +
      (OUTAGE_MS ? `, PostgreSQL outage ${OUTAGE_MS / 1000} s` : "") +
      `; schema ${SCHEMA}; logs ${LOG_DIR}`,
  );
  await (async () => {
    const c = new pg.Client({ connectionString: DATABASE });
    await c.connect();
    await c.query(`CREATE SCHEMA ${SCHEMA}`);
    await c.end();
  })();

  const ports = await Promise.all(Array.from({ length: SERVERS }, () => freePort()));
  const servers = ports.map(
    (port, i) =>
      new ServerProcess({
        database: DATABASE,
        schema: SCHEMA,
        cluster: MODE,
        port,
        graceMs: GRACE_MS,
        logFile: join(LOG_DIR, `server-${i}.log`),
      }),
  );
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const workers: Worker[] = [];
  const working: Promise<void>[] = [];
  const stats: Stats = { kills: 0, leaderKills: 0, unexpectedExits: 0, failovers: [], outage: null };
  let summary: LedgerSummary | null = null;
  let outageRunning = false;
  try {
    // Start the first server alone so it migrates the schema, then the others.
    await servers[0]?.start();
    await Promise.all(servers.slice(1).map((s) => s.start()));
    const client = new OrbitClient({ baseUrl: servers[0]!.url });
    await client.registerWorkflow({ name: WORKFLOW, version: "1.0.0" });
    for (const s of servers) {
      const w = new Worker({ server: s.url, workflows: [ChaosNoop], concurrency: 50, logger: quiet });
      workers.push(w);
      working.push(w.run().catch((err: unknown) => say(`worker stopped: ${(err as Error).message}`)));
    }
    // Create the schedules through different servers (a change on one must wake the firing ones).
    for (const [i, body] of CHAOS_SCHEDULES.entries()) {
      const via = new OrbitClient({ baseUrl: servers[i % SERVERS]!.url });
      await via.createSchedule({ workflow: WORKFLOW, ...body } as Parameters<OrbitClient["createSchedule"]>[0]);
    }
    say(`${CHAOS_SCHEDULES.length} schedules created; chaos starts`);

    const end = Date.now() + RUN_MS;
    const outageAt = OUTAGE_MS ? Date.now() + Math.min(RUN_MS / 3, 60_000) : Infinity;
    let nextProgress = Date.now() + 10_000;
    let nextKill = Date.now() + rand(0.5, 1.5) * KILL_EVERY_MS;
    // Killed servers come back at these times; one killed while starting is simply started again.
    const restartAt = new Map<ServerProcess, number>();
    const starting = new Set<ServerProcess>();
    const restartDue = (): void => {
      for (const s of servers) {
        if (s.running || starting.has(s) || outageRunning) continue;
        const at = restartAt.get(s);
        if (at === undefined && s.unexpectedExits === 0) continue;
        if (at !== undefined && Date.now() < at) continue;
        if (at === undefined) say(`server :${s.spec.port} exited on its own; restarting`);
        restartAt.delete(s);
        starting.add(s);
        s.start().then(
          () => starting.delete(s),
          (err: unknown) => {
            starting.delete(s);
            restartAt.set(s, Date.now() + 1000);
            say(`restart of :${s.spec.port} failed (${(err as Error).message}); again in 1 s`);
          },
        );
      }
    };
    while (Date.now() < end) {
      await sleep(250);
      restartDue();
      if (Date.now() >= outageAt && stats.outage === null) {
        stats.outage = { stoppedMs: Date.now(), downMs: 0, firstFireAfterMs: null, serversUp: 0 };
        say(`stopping PostgreSQL for ${OUTAGE_MS / 1000} s`);
        outageRunning = true;
        try {
          pgCtl("stop");
          await sleep(OUTAGE_MS);
        } finally {
          pgCtl("start");
          outageRunning = false;
        }
        const back = Date.now();
        stats.outage.downMs = back - stats.outage.stoppedMs;
        await waitForDatabase();
        say("PostgreSQL is back");
        stats.outage.firstFireAfterMs = await timeToNextFire(back, 60_000);
        stats.outage.serversUp = servers.filter((s) => s.running).length;
        say(
          `first execution ${stats.outage.firstFireAfterMs ?? "none"} ms after PostgreSQL started; ` +
            `${stats.outage.serversUp}/${SERVERS} servers still up`,
        );
        nextKill = Date.now() + KILL_EVERY_MS;
      }
      if (Date.now() >= nextKill) {
        nextKill = Date.now() + rand(0.5, 1.5) * KILL_EVERY_MS;
        const up = servers.filter((s) => s.running);
        if (up.length === 0) continue;
        const roles = MODE === "active-standby" ? await Promise.all(servers.map((s) => s.role())) : [];
        const leader = roles.indexOf("leader");
        let victim = up[Math.floor(Math.random() * up.length)]!;
        // Half of the kills in active-standby hit the leader: that is the failover being tested.
        if (leader >= 0 && Math.random() < 0.5) victim = servers[leader]!;
        const isLeader = leader >= 0 && servers[leader] === victim;
        // Sometimes a second server too (never the last one), so that only one is left for a while.
        const others = servers.filter((s) => s.running && s !== victim);
        const second = others.length >= 2 && Math.random() < 0.2 ? others[0] : undefined;
        const standbys = roles.filter((r, i) => r === "standby" && servers[i] !== second).length;
        const killedAt = Date.now();
        await victim.kill();
        stats.kills++;
        if (second) {
          await second.kill();
          stats.kills++;
        }
        say(`SIGKILL :${victim.spec.port}${isLeader ? " (leader)" : ""}${second ? ` and :${second.spec.port}` : ""}`);
        if (isLeader) stats.leaderKills++;
        // Failover: the leader killed while a ready standby was up. Measured in the background.
        if (isLeader && standbys > 0) {
          void timeToNextFire(killedAt).then((ms) => {
            if (ms !== null) stats.failovers.push(ms);
            say(`failover: next execution ${ms ?? "none in 30 s"} ms after the leader died`);
          });
        }
        for (const s of [victim, second]) if (s) restartAt.set(s, Date.now() + rand(1000, 8000));
      }
      if (Date.now() >= nextProgress) {
        nextProgress = Date.now() + 10_000;
        const roles = await Promise.all(servers.map((s) => (s.running ? s.role() : Promise.resolve("down"))));
        const [row] = await admin<{ n: string }>("SELECT count(*) AS n FROM orbit_executions").catch(() => [
          { n: "?" },
        ]);
        say(`executions ${row?.n}; servers ${roles.join(" ")}; kills ${stats.kills}`);
      }
    }

    // Calm down: every server up, a few seconds of firing, then pause everything and check.
    for (const s of servers) restartAt.set(s, 0);
    while (servers.some((s) => !s.running) || starting.size > 0) {
      restartDue();
      await sleep(250);
    }
    say("chaos over; all servers up; letting them settle for 5 s");
    await sleep(5000);
    const pausedAt = Date.now();
    for (const body of CHAOS_SCHEDULES) await client.pauseSchedule(String(body.schedule_id), { note: "chaos end" });
    await sleep(1000);
    stats.unexpectedExits = servers.reduce((n, s) => n + s.unexpectedExits, 0);
    summary = await checkLedger({ database: DATABASE, schema: SCHEMA, accountedUntilMs: pausedAt - 3000 });
  } finally {
    if (outageRunning) pgCtl("start");
    await Promise.all(workers.map((w) => w.close().catch(() => undefined)));
    await Promise.allSettled(working);
    await Promise.all(servers.map((s) => s.stop()));
    for (const s of servers) s.close();
    if (!args.keep) {
      await waitForDatabase().catch(() => undefined);
      const c = new pg.Client({ connectionString: DATABASE });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await c.end();
    }
  }
  print(summary, stats);
  if (summary.violations.length > 0 || stats.unexpectedExits > 0) process.exitCode = 1;
}

function print(summary: LedgerSummary, stats: Stats): void {
  const reasons = [...new Set(summary.schedules.flatMap((s) => Object.keys(s.skipped)))].sort();
  const header = ["schedule", "checked", "started", ...reasons.map((r) => `skipped:${r}`), "pending", "violations"];
  const rows = summary.schedules.map((s) => [
    s.scheduleId,
    String(s.checked),
    String(s.started),
    ...reasons.map((r) => String(s.skipped[r] ?? 0)),
    String(s.pending),
    String(s.violations.length),
  ]);
  rows.push([
    "total",
    String(summary.schedules.reduce((n, s) => n + s.checked, 0)),
    String(summary.started),
    ...reasons.map((r) => String(summary.skipped[r] ?? 0)),
    String(summary.pending),
    String(summary.violations.length),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  console.log();
  console.log(`## chaos summary: mode ${MODE}, ${SERVERS} servers, ${args.minutes} min`);
  console.log();
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) console.log(line(r));
  console.log();
  console.log(`kills (SIGKILL): ${stats.kills}; unexpected server exits: ${stats.unexpectedExits}`);
  if (MODE === "active-standby") {
    const f = [...stats.failovers].sort((a, b) => a - b);
    const median = f[Math.floor(f.length / 2)];
    console.log(
      `leader kills: ${stats.leaderKills}; failover to the next execution: ${f.length ? `median ${median} ms, max ${f[f.length - 1]} ms, all ${f.join(", ")} ms` : "not measured"}`,
    );
  }
  if (stats.outage) {
    const o = stats.outage;
    console.log(
      `PostgreSQL outage: down ${(o.downMs / 1000).toFixed(1)} s; first execution ${o.firstFireAfterMs ?? "none"} ms after it came back; servers up after it: ${o.serversUp}/${SERVERS}`,
    );
  }
  console.log(`violations: ${summary.violations.length}`);
  for (const v of summary.violations.slice(0, 50)) console.log(`  ${v}`);
}

await main();
