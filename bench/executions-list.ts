/**
 * The executions list with large results (docs/api.md § Executions, view=summary): a tester's 50
 * executions whose workflow returns 900 KB made `GET /v1/executions?limit=50` a 43 MB answer,
 * which the web UI read on every refresh. Starts a server, completes `--executions` executions
 * with a `--result-kb` result each through the worker protocol, then times the page over HTTP
 * (the whole body read, as curl does) in the full view and the summary view.
 *
 *   node --import tsx bench/executions-list.ts                          # SQLite, 50 x 900 KB
 *   node --import tsx bench/executions-list.ts --database postgres://…  # PostgreSQL (a schema of its own)
 *   node --import tsx bench/executions-list.ts --executions 200 --result-kb 100 --repeat 9
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startServer } from "../src/server/server.js";
import { loadAverage } from "./lib/load.js";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const EXECUTIONS = Number(flag("--executions") ?? 50);
const RESULT_KB = Number(flag("--result-kb") ?? 900);
const REPEAT = Number(flag("--repeat") ?? 7);
const DATABASE = flag("--database");

const dir = mkdtempSync(join(tmpdir(), "orbit-bench-executions-list-"));
const schema = `orbit_bench_list_${randomBytes(4).toString("hex")}`;
const admin = DATABASE ? new pg.Client({ connectionString: DATABASE }) : null;
if (admin) {
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
}
const server = await startServer({
  port: 0,
  dataDir: dir,
  logger: "silent",
  ...(DATABASE ? { database: DATABASE, databaseSchema: schema } : {}),
});

async function call(method: string, path: string, body?: unknown): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { text, ms };
}
const json = async (method: string, path: string, body?: unknown) =>
  JSON.parse((await call(method, path, body)).text || "null");

try {
  await json("POST", "/v1/workflows", { name: "Report", version: "1.0.0" });
  for (let i = 0; i < EXECUTIONS; i++) {
    await json("POST", "/v1/executions", { workflow: "Report", input: { report: i } });
  }
  const result = { rows: "r".repeat(RESULT_KB * 1000) };
  let completed = 0;
  while (completed < EXECUTIONS) {
    const { tasks } = await json("POST", "/v1/worker/poll", {
      worker_id: "bench",
      workflows: [{ name: "Report", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 10,
      wait_ms: 0,
    });
    for (const task of tasks as { task_id: string }[]) {
      await json("POST", `/v1/worker/tasks/${task.task_id}/complete`, { worker_id: "bench", result });
      completed++;
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(
    `${DATABASE ? "PostgreSQL" : "SQLite"}: ${EXECUTIONS} executions, ${RESULT_KB} KB result each; load ${loadAverage()}`,
  );
  for (const view of ["full", "summary"]) {
    const path = `/v1/executions?limit=${Math.min(EXECUTIONS, 1000)}${view === "full" ? "" : "&view=summary"}`;
    await call("GET", path); // warm
    const times: number[] = [];
    let bytes = 0;
    for (let r = 0; r < REPEAT; r++) {
      const { text, ms } = await call("GET", path);
      bytes = Buffer.byteLength(text);
      times.push(ms);
    }
    console.log(
      `  ${path.padEnd(40)} ${bytes.toLocaleString("en")} bytes, median ${median(times).toFixed(1)} ms (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)})`,
    );
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  if (admin) {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
