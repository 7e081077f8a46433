/**
 * One firing "server" of bench/fire-cluster.ts: its own process and pool on the shared schema, a
 * manual clock just past the herd's instant, and `loop.fireDue()` once the parent says go.
 * Prints `ready`, then `{"fired":…,"started":…,"t0":…,"t1":…}` (epoch ms).
 */
import { createInterface } from "node:readline";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { wire } from "./fire-env.js";

const url = process.env.BENCH_PG_URL as string;
const schema = process.env.BENCH_PG_SCHEMA as string;
const at = Number(process.env.BENCH_AT_MS);

const store = new PostgresStore({ connectionString: url, searchPath: schema });
await store.open();
let started = 0;
const { scheduler } = await wire(store, new ManualClock(at + 1000), (report) => {
  started += report.started;
});
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() !== "go") continue;
  const t0 = Date.now();
  const fired = await scheduler.loop.fireDue();
  const t1 = Date.now();
  process.stdout.write(`${JSON.stringify({ fired, started, t0, t1 })}\n`);
  break;
}
lines.close();
await scheduler.close();
await store.close();
