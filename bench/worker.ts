/**
 * `npm run bench:worker`: the worker path end to end, schedule → worker → COMPLETED, with a no-op
 * workflow, on a real server (HTTP on loopback) and a Worker in this process.
 *
 *   latency:    20 one-second schedules (overlap allow) for 10 s; per execution, the time from the
 *               fire (the execution's creation, inside the fire transaction) to the worker's handler
 *               starting (Date.now() in the workflow; server and worker share this process's clock):
 *               p50 / p99 / max. Also printed: fire → lease (its WorkflowTaskStarted event), which
 *               is 0 ms by construction for a task handed to a waiting worker's poll: the start
 *               transaction leases it with the same `now` it creates it with
 *               (src/engine/start-batch.ts, flush → writeLeases); only tasks that waited for a poll
 *               show a lag there.
 *   throughput: a backfill of 3,000 occurrences of one schedule; executions completed per second
 *               from the backfill request to the last COMPLETED.
 *
 * SQLite in a temp dir by default; PostgreSQL (a throwaway schema) when ORBIT_BENCH_DATABASE_URL or
 * ORBIT_TEST_DATABASE_URL (the one every other bench reads) is set, the first one set winning.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { OrbitClient } from "../src/client/client.js";
import { defineWorkflow, Worker } from "../src/index.js";
import { startServer } from "../src/server/server.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { startWorkerServer } from "../test/worker/fixtures/worker-server.js";
import { loadAverage } from "./lib/load.js";
import { adminSql } from "./lib/pg-admin.js";

const N_SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 20);
const LATENCY_S = Number(process.env.BENCH_SECONDS ?? 10);
const BACKFILL = Number(process.env.BENCH_BACKFILL ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);

/** When each execution's handler began (Date.now(), by execution id). */
const handlerStarts = new Map<string, number>();
const Noop = defineWorkflow({
  name: "Noop",
  version: "1.0.0",
  run: async (ctx) => {
    if (!handlerStarts.has(ctx.executionId)) handlerStarts.set(ctx.executionId, Date.now());
    return null;
  },
});

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-worker-"));
  const database = process.env.ORBIT_BENCH_DATABASE_URL || process.env.ORBIT_TEST_DATABASE_URL || undefined;
  const server = await serve(dir, database);
  const client = new OrbitClient({ baseUrl: server.url });
  const quiet = { info: () => undefined, warn: () => undefined, error: console.error };
  await client.registerWorkflow({ name: Noop.name, version: Noop.version });
  const worker = new Worker({ server: server.url, workflows: [Noop], concurrency: CONCURRENCY, logger: quiet });
  const working = worker.run();
  try {
    console.log(
      `store: ${database ? "postgres" : "sqlite"}, worker concurrency ${CONCURRENCY}, node ${process.version}, load (1/5/15 min) before ${loadAverage()}`,
    );
    await latency(client);
    await throughput(client);
    console.log(`load (1/5/15 min) after: ${loadAverage()}`);
  } finally {
    await worker.close();
    await working;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** startServer; until it wires the worker routes, the same wiring from the worker tests' fixture. */
async function serve(dir: string, database: string | undefined): Promise<{ url: string; close(): Promise<void> }> {
  const schema = database ? await scratchSchema(database) : undefined;
  const pg = database && schema ? { database, databaseSchema: schema } : {};
  const server = await startServer({ port: 0, dataDir: dir, logger: "warn", ...pg });
  if (server.routes.includes("POST /v1/worker/poll")) {
    return {
      url: server.url,
      close: async () => {
        await server.close();
        if (database && schema) await adminSql(`DROP SCHEMA ${schema} CASCADE`, database);
      },
    };
  }
  await server.close();
  console.log("(startServer has no worker routes yet: using test/worker/fixtures/worker-server.ts)");
  const store = database
    ? new PostgresStore({ connectionString: database, ...(schema ? { searchPath: schema } : {}) })
    : new SqliteStore({ dataDir: dir });
  await store.open();
  const server2 = await startWorkerServer({ store, ...(database ? { databaseUrl: database } : {}) });
  return {
    url: server2.url,
    close: async () => {
      await server2.close();
      if (database && schema) await adminSql(`DROP SCHEMA ${schema} CASCADE`, database);
    },
  };
}

/** PostgreSQL: a throwaway schema, dropped when the bench closes its server. */
async function scratchSchema(url: string): Promise<string> {
  const schema = `orbit_bench_${randomBytes(4).toString("hex")}`;
  await adminSql(`CREATE SCHEMA ${schema}`, url);
  return schema;
}

async function drained(client: OrbitClient): Promise<void> {
  while ((await client.listExecutions({ status: "RUNNING", limit: 1 })).executions.length) await delay(50);
}

async function latency(client: OrbitClient): Promise<void> {
  const ids = Array.from({ length: N_SCHEDULES }, (_, i) => `lat-${i}`);
  for (const id of ids)
    await client.createSchedule({ schedule_id: id, workflow: "Noop", interval: "1s", overlap: "allow" });
  await delay(LATENCY_S * 1000);
  for (const id of ids) await client.pauseSchedule(id);
  await drained(client);
  const lags: number[] = [];
  const handled: number[] = [];
  for (const id of ids) {
    for (const e of (await client.listExecutions({ schedule_id: id, limit: 1000 })).executions) {
      const events = await client.executionEvents(e.execution_id);
      const created = events.find((x) => x.type === "WorkflowCreated");
      const picked = events.find((x) => x.type === "WorkflowTaskStarted");
      if (created && picked) lags.push(Date.parse(picked.at) - Date.parse(created.at));
      const began = handlerStarts.get(e.execution_id);
      if (created && began !== undefined) handled.push(began - Date.parse(created.at));
    }
  }
  const line = (xs: number[]): string => {
    xs.sort((a, b) => a - b);
    return `${xs.length} executions, p50 ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms, max ${xs.at(-1)} ms`;
  };
  console.log(`latency  fire → handler start in the worker: ${line(handled)}`);
  console.log(
    `latency  fire → lease (WorkflowTaskStarted): ${line(lags)} (0 ms by construction for a task handed to a waiting poll: leased in the start transaction with the same now)`,
  );
}

async function throughput(client: OrbitClient): Promise<void> {
  await client.createSchedule({
    schedule_id: "bulk",
    workflow: "Noop",
    interval: "1s",
    overlap: "allow",
    paused: true,
  });
  const from = Date.UTC(2026, 0, 1);
  const started = performance.now();
  const result = await client.backfillSchedule("bulk", {
    start_at: new Date(from).toISOString(),
    end_at: new Date(from + (BACKFILL - 1) * 1000).toISOString(),
  });
  const backfilled = (performance.now() - started) / 1000;
  await drained(client);
  const seconds = (performance.now() - started) / 1000;
  const done = (await client.listExecutions({ schedule_id: "bulk", status: "COMPLETED", limit: 1000 })).executions
    .length;
  console.log(
    `throughput backfill → COMPLETED: ${result.started} executions in ${seconds.toFixed(2)} s = ${Math.round(result.started / seconds)} executions/s (the backfill request took ${backfilled.toFixed(2)} s; first page: ${done} COMPLETED)`,
  );
}

await main();
