/**
 * `npm run bench:fire-cluster [-- --herd N] [-- --servers 1,2,3]`: herd throughput of shared-mode
 * firing on one PostgreSQL database, with 1, 2 and 3 firing processes. Each process is a scheduler
 * as a shared-mode server runs it (own pool, `FOR UPDATE SKIP LOCKED` + the row compare-and-set);
 * a herd of N hourly cron schedules due at one instant is fired by all of them at once. Reports
 * fires/s of the whole cluster and each process's share, and checks that every schedule fired
 * exactly once (N executions, N advanced rows). See docs/benchmarks.md, "Firing on several servers".
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { type BulkRow, INPUT, WORKFLOW } from "./lib/fire-env.js";
import { cronRows, HOUR_MS, topOfHour } from "./lib/fire-phases.js";
import { int, table } from "./lib/fire-stats.js";
import { loadAverage } from "./lib/load.js";

const CHILD = fileURLToPath(new URL("./lib/fire-cluster-child.ts", import.meta.url));
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const HERD = Number(arg("--herd") ?? 10_000);
const COUNTS = (arg("--servers") ?? "1,2,3").split(",").map(Number);

interface ChildResult {
  fired: number;
  started: number;
  t0: number;
  t1: number;
}

function child(url: string, schema: string, at: number) {
  const proc = spawn(process.execPath, ["--import", "tsx", CHILD], {
    env: { ...process.env, BENCH_PG_URL: url, BENCH_PG_SCHEMA: schema, BENCH_AT_MS: String(at) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  let onReady: () => void = () => undefined;
  let onResult: (r: ChildResult) => void = () => undefined;
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const result = new Promise<ChildResult>((resolve, reject) => {
    onResult = resolve;
    proc.on("exit", (code) => reject(new Error(`bench child exited (${code})`)));
  });
  proc.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    for (;;) {
      const nl = out.indexOf("\n");
      if (nl < 0) break;
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line === "ready") onReady();
      else if (line.startsWith("{")) onResult(JSON.parse(line) as ChildResult);
    }
  });
  return { ready, result, go: () => proc.stdin.write("go\n") };
}

const PG_URL = process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const COLUMNS =
  "schedule_id, workflow, version, input, spec, paused, pause_note, state, next_fire_ms, due_ms, retry_ms, revision, fired, skipped, last_fire_ms, last_execution_id, last_error, buffered, concurrency_key, created_ms, updated_ms";

/** A fresh schema, migrated, holding the herd; returns the admin client (search_path set) and a drop. */
async function prepare(rows: readonly BulkRow[], now: number) {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  await admin.connect();
  const schema = `orbit_bench_cluster_${randomBytes(4).toString("hex")}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = new PostgresStore({ connectionString: PG_URL, searchPath: schema });
  await store.open(); // migrates
  await store.close();
  await admin.query(`SET search_path = ${schema}`);
  for (let i = 0; i < rows.length; i += 20_000) {
    const chunk = rows.slice(i, i + 20_000);
    await admin.query(
      `INSERT INTO orbit_schedules (${COLUMNS})
       SELECT u.id, $4, NULL, $5::jsonb, u.spec::jsonb, FALSE, NULL, 'active', u.nf, u.due, NULL, 1, 0, 0, NULL, NULL, NULL,
              '[]'::jsonb, NULL, $6, $6
       FROM unnest($1::text[], $2::text[], $3::bigint[], $7::bigint[]) AS u(id, spec, nf, due)`,
      [
        chunk.map((r) => r.id),
        chunk.map((r) => JSON.stringify(r.spec)),
        chunk.map((r) => r.nextFireMs),
        WORKFLOW,
        JSON.stringify(INPUT),
        now,
        chunk.map((r) => r.dueMs),
      ],
    );
  }
  return {
    schema,
    count: async (sql: string) => Number((await admin.query(sql)).rows[0]?.n),
    drop: async () => {
      await admin.query("SET search_path = public");
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const loadBefore = loadAverage();
try {
  const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  await probe.connect();
  await probe.end();
} catch (error) {
  console.log(
    `PostgreSQL skipped: cannot connect to ${PG_URL} (${(error as Error).message}); set ORBIT_TEST_DATABASE_URL`,
  );
  process.exit(0);
}

const rows: string[][] = [];
for (const n of COUNTS) {
  const now = Date.now();
  const at = topOfHour(now) + HOUR_MS;
  const db = await prepare(cronRows("herd-", HERD, at, now), now);
  try {
    const children = Array.from({ length: n }, () => child(PG_URL, db.schema, at));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go();
    const results = await Promise.all(children.map((c) => c.result));
    const seconds = (Math.max(...results.map((r) => r.t1)) - Math.min(...results.map((r) => r.t0))) / 1000;
    const fired = results.reduce((s, r) => s + r.fired, 0);
    const executions = await db.count("SELECT COUNT(*) AS n FROM orbit_executions");
    const advanced = await db.count(`SELECT COUNT(*) AS n FROM orbit_schedules WHERE next_fire_ms > ${at}`);
    const once =
      fired === HERD && executions === HERD && advanced === HERD
        ? "yes"
        : `NO (fired ${fired}, executions ${executions}, advanced ${advanced})`;
    rows.push([
      String(n),
      int(HERD),
      seconds.toFixed(1),
      int(fired / seconds),
      results.map((r) => int(r.fired)).join(" / "),
      once,
    ]);
    console.log(`${n} server(s): ${int(fired / seconds)} fires/s in ${seconds.toFixed(1)} s; exactly once: ${once}`);
  } finally {
    await db.drop();
  }
}

console.log();
console.log(`Herd of ${int(HERD)} hourly cron schedules due at one instant, fired by N shared-mode processes`);
console.log(`on one PostgreSQL (${cpus().length} cores, ${cpus()[0]?.model ?? "?"}; PostgreSQL on the same machine).`);
console.log();
console.log(table(["servers", "herd", "seconds", "fires/s (cluster)", "fired per process", "exactly once"], rows));
console.log(`\nload (1/5/15 min) before → after: ${loadBefore} → ${loadAverage()}`);
// A row that was not exactly once is a failure of the run, not only a figure.
if (rows.some((r) => r[5] !== "yes")) process.exitCode = 1;
