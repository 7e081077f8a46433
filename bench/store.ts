/**
 * `npm run bench:store`: executions started per second through the engine (validation, execution
 * row, WorkflowCreated event, worker task), on each dialect, one transaction per start ("single")
 * and 100 starts per transaction ("batched").
 * PostgreSQL: ORBIT_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test; skipped with a
 * message when it cannot connect. Runs in a throwaway schema / temp directory.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Executions } from "../src/engine/executions.js";
import { Workflows } from "../src/engine/workflows.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Store } from "../src/store/store.js";
import { loadAverage } from "./lib/load.js";

const PG_URL = process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const BATCH = 100;
const INPUT_SCHEMA = {
  type: "object",
  properties: {
    order_id: { type: "string" },
    amount: { type: "number" },
    currency: { type: "string", default: "EUR" },
  },
  required: ["order_id", "amount"],
};

interface Row {
  store: string;
  mode: string;
  starts: number;
  seconds: number;
}

async function measure(store: Store, label: string, singles: number, batches: number): Promise<Row[]> {
  const clock = { now: () => Date.now() };
  const workflows = new Workflows({ store, clock });
  await workflows.register({ name: "Bench", version: "1.0.0", input_schema: INPUT_SCHEMA });
  const executions = new Executions({ store, clock, workflows });
  const input = (i: number) => ({ order_id: `o-${i}`, amount: i });

  // Warm up statement caches and the validator.
  for (let i = 0; i < 50; i++) await executions.start({ workflow: "Bench", input: input(i) });

  let t = performance.now();
  for (let i = 0; i < singles; i++) await executions.start({ workflow: "Bench", input: input(i) });
  const single = (performance.now() - t) / 1000;

  t = performance.now();
  for (let b = 0; b < batches; b++) {
    await store.transaction(async (tx) => {
      for (let i = 0; i < BATCH; i++) await executions.start({ workflow: "Bench", input: input(i) }, tx);
    });
  }
  const batched = (performance.now() - t) / 1000;
  return [
    { store: label, mode: "single (1 start / tx)", starts: singles, seconds: single },
    { store: label, mode: `batched (${BATCH} starts / tx)`, starts: batches * BATCH, seconds: batched },
  ];
}

async function sqlite(synchronous: "full" | "normal"): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-"));
  const store = new SqliteStore({ dataDir: dir, synchronous });
  try {
    await store.open();
    return await measure(store, `sqlite (synchronous=${synchronous})`, 3000, 100);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<Row[] | string> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return `PostgreSQL skipped: cannot connect to ${PG_URL} (${(error as Error).message}); set ORBIT_TEST_DATABASE_URL`;
  }
  const schema = `orbit_bench_${randomBytes(4).toString("hex")}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = new PostgresStore({ connectionString: PG_URL, searchPath: schema });
  try {
    await store.open();
    return await measure(store, "postgres", 2000, 50);
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

const loadBefore = loadAverage();
const rows: Row[] = [...(await sqlite("full")), ...(await sqlite("normal"))];
const pgRows = await postgres();
if (typeof pgRows === "string") console.log(pgRows);
else rows.push(...pgRows);

const table = rows.map((r) => [
  r.store,
  r.mode,
  String(r.starts),
  r.seconds.toFixed(2),
  Math.round(r.starts / r.seconds).toLocaleString("en-US"),
]);
const header = ["store", "mode", "starts", "seconds", "starts/s"];
const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ");
console.log(`\nExecutions started per second (Node ${process.version})\n`);
console.log(line(header));
console.log(widths.map((w) => "-".repeat(w)).join("  "));
for (const r of table) console.log(line(r));
console.log(`\nload (1/5/15 min) before → after: ${loadBefore} → ${loadAverage()}`);
