/**
 * `npm run bench:api`: the HTTP API on SQLite. Schedule creates per second over HTTP (keep-alive,
 * several concurrent clients), then GET /v1/schedules latency (first page) with 100k schedules
 * stored (inserted through the Store in big transactions, not 100k HTTP calls).
 * Runs a real server on port 0 in a temp directory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../src/server/server.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { loadAverage } from "./lib/load.js";

const CREATES = Number(process.env.BENCH_CREATES ?? 3000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const STORED = Number(process.env.BENCH_SCHEDULES ?? 100_000);
const READS = Number(process.env.BENCH_READS ?? 300);
const CRON = "0 0 1 1 *"; // yearly: nothing fires during the run

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function timedGets(url: string, n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b);
}

/** A stored schedule id halfway through the ids: http-… (the HTTP creates) then bulk-… (the fill). */
function middleId(creates: number, stored: number): string {
  const pad = (i: number): string => String(i).padStart(6, "0");
  const total = Math.max(creates, stored);
  const i = Math.floor(total / 2);
  return i < creates ? `http-${pad(i)}` : `bulk-${pad(i)}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-api-"));
  const server = await startServer({ port: 0, dataDir: dir, logger: "silent" });
  const rows: Array<[string, string]> = [];
  const loadBefore = loadAverage();
  try {
    await post(`${server.url}/v1/workflows`, { name: "Bench", version: "1.0.0" });

    // 1. creates over HTTP
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = next++; i < CREATES; i = next++) {
          const status = await post(`${server.url}/v1/schedules`, {
            schedule_id: `http-${String(i).padStart(6, "0")}`,
            workflow: "Bench",
            cron: CRON,
            input: { n: i },
          });
          if (status !== 201) throw new Error(`create ${i}: ${status}`);
        }
      }),
    );
    const createSeconds = (performance.now() - t0) / 1000;
    rows.push([
      `POST /v1/schedules (${CLIENTS} clients, keep-alive)`,
      `${Math.round(CREATES / createSeconds)} creates/s`,
    ]);

    // 2. fill to STORED schedules through a second connection on the same file
    const store = new SqliteStore({ dataDir: dir, synchronous: "normal" });
    await store.open();
    const template = await store.getSchedule("http-000000");
    if (template === null) throw new Error("template schedule missing");
    const t1 = performance.now();
    for (let start = CREATES; start < STORED; start += 10_000) {
      await store.transaction(async (tx) => {
        for (let i = start; i < Math.min(STORED, start + 10_000); i++) {
          const id = `bulk-${String(i).padStart(6, "0")}`;
          await tx.insertSchedule({ ...template, scheduleId: id, spec: { ...template.spec, schedule_id: id } });
        }
      });
    }
    await store.close();
    rows.push([
      `bulk insert through the Store (${STORED - CREATES} rows)`,
      `${((performance.now() - t1) / 1000).toFixed(1)} s`,
    ]);

    // 3. read latency with STORED schedules; the cursor and the single read use a stored id from the
    // middle (bulk-050000 at the default sizes), whatever BENCH_CREATES and BENCH_SCHEDULES are.
    const mid = middleId(CREATES, STORED);
    for (const [label, path] of [
      ["GET /v1/schedules (first page, 100)", "/v1/schedules"],
      ["GET /v1/schedules?limit=1000", "/v1/schedules?limit=1000"],
      [`GET /v1/schedules?workflow=Bench&cursor=${mid}`, `/v1/schedules?workflow=Bench&cursor=${mid}`],
      ["GET /v1/schedules/{id}", `/v1/schedules/${mid}`],
    ] as const) {
      await timedGets(server.url + path, 20); // warm-up
      const ms = await timedGets(server.url + path, READS);
      rows.push([
        `${label}, ${Math.max(CREATES, STORED)} stored`,
        `p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms`,
      ]);
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const width = Math.max(...rows.map(([a]) => a.length));
  console.log(`orbit API benchmark (SQLite, Node ${process.version})\n`);
  console.log(`${"measure".padEnd(width)}  result`);
  console.log(`${"-".repeat(width)}  ${"-".repeat(30)}`);
  for (const [a, b] of rows) console.log(`${a.padEnd(width)}  ${b}`);
  console.log(`\nload (1/5/15 min) before → after: ${loadBefore} → ${loadAverage()}`);
}

await main();
