/**
 * `npm run bench:create`: how long creating N per-minute cron schedules takes (docs/benchmarks.md
 * § Creating schedules), on SQLite and PostgreSQL, two ways: `POST /v1/schedules/batch` with 1,000
 * per request (one request after another), and `orbit schedule apply -f FILE` of one N-entry file
 * (the CLI run as a child process, its start-up included). Every measurement gets a fresh server
 * process (the bench:e2e server child) and a fresh database (SQLite: a temp folder; PostgreSQL: a
 * throwaway schema of ORBIT_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
 * skipped with a message when unreachable). BullMQ's `upsertJobScheduler` for N repeatable jobs (500
 * in parallel, as bench:e2e creates them; Redis at BENCH_REDIS_URL, default redis://127.0.0.1:6379,
 * skipped with a message when it does not answer within 3 s) runs in the same run for comparison. The load average is printed before and after each row.
 *
 *   npm run bench:create -- --schedules 10000 --rounds 3 --systems sqlite,pg,bullmq
 */
import { execFile, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { Queue } from "bullmq";
import { OrbitClient } from "../src/client/client.js";
import { adminSql } from "./lib/pg-admin.js";
import { redisUnreachable } from "./lib/redis-check.js";

const { values: args } = parseArgs({
  options: {
    schedules: { type: "string", default: "10000" },
    rounds: { type: "string", default: "1" },
    systems: { type: "string", default: "sqlite,pg,bullmq" },
    /** Entries per apply file (the CLI run once per file); before this bench, the server took at most 1,000. */
    "file-size": { type: "string", default: "" },
  },
});
const N = Number(args.schedules);
const ROUNDS = Number(args.rounds);
const FILE = Number(args["file-size"] || N);
const PG_URL = process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379";
const root = new URL("../", import.meta.url).pathname;
const run = promisify(execFile);

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** A fresh Orbit server process on a fresh database; `close` stops it and drops the database. */
async function orbitServer(dialect: "sqlite" | "pg"): Promise<{ url: string; close: () => Promise<void> }> {
  let target: string;
  let schema: string | undefined;
  let drop: () => Promise<void>;
  if (dialect === "pg") {
    target = PG_URL;
    schema = `orbit_create_${randomBytes(4).toString("hex")}`;
    await adminSql(`CREATE SCHEMA ${schema}`);
    drop = () => adminSql(`DROP SCHEMA ${schema} CASCADE`);
  } else {
    target = mkdtempSync(join(tmpdir(), "orbit-create-"));
    drop = async () => rmSync(target, { recursive: true, force: true });
  }
  const settings = {
    system: `orbit-${dialect}`,
    schedules: N,
    concurrency: null,
    target,
    ...(schema ? { schema } : {}),
  };
  const child = fork(join(root, "bench/lib/e2e-orbit-server.ts"), [JSON.stringify(settings)], {
    execArgv: ["--import", "tsx"],
    stdio: "inherit",
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.on("message", (m: { type?: string; url?: string }) => {
      if (m.type === "ready" && m.url) resolve(m.url);
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before ready`)));
  });
  return {
    url,
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ type: "stop" });
      const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(kill);
      await drop();
    },
  };
}

const entry = (i: number) => ({ schedule_id: `s${i}`, workflow: "Noop", cron: "* * * * *", timezone: "UTC" });

/** N schedules through POST /v1/schedules/batch, 1,000 per request; seconds. */
async function viaBatch(dialect: "sqlite" | "pg"): Promise<number> {
  const server = await orbitServer(dialect);
  try {
    const client = new OrbitClient({ baseUrl: server.url });
    await client.registerWorkflow({ name: "Noop", version: "1.0.0" });
    const t0 = performance.now();
    for (let i = 0; i < N; i += 1000) {
      const batch = [];
      for (let j = i; j < Math.min(N, i + 1000); j++) batch.push(entry(j));
      await client.createSchedules(batch);
    }
    const s = (performance.now() - t0) / 1000;
    const page = (await (await fetch(`${server.url}/v1/schedules?limit=1&sort=id`)).json()) as { total?: number };
    if (page.total !== N) throw new Error(`expected ${N} schedules, the server has ${page.total}`);
    return s;
  } finally {
    await server.close();
  }
}

/** N schedules through `orbit schedule apply -f FILE` (one file, the CLI as a child process); seconds. */
async function viaApply(dialect: "sqlite" | "pg"): Promise<number> {
  const server = await orbitServer(dialect);
  const dir = mkdtempSync(join(tmpdir(), "orbit-create-file-"));
  try {
    const client = new OrbitClient({ baseUrl: server.url });
    await client.registerWorkflow({ name: "Noop", version: "1.0.0" });
    // YAML is a superset of JSON: a list with one entry per line.
    const files: string[] = [];
    for (let i = 0; i < N; i += FILE) {
      const file = join(dir, `schedules-${i}.yaml`);
      const n = Math.min(FILE, N - i);
      writeFileSync(file, `[\n${Array.from({ length: n }, (_, k) => JSON.stringify(entry(i + k))).join(",\n")}\n]\n`);
      files.push(file);
    }
    const t0 = performance.now();
    for (const [k, file] of files.entries()) {
      const cli = [join(root, "bin/orbit.js"), "schedule", "apply", "-f", file, "--server", server.url];
      const out = await run(process.execPath, cli, { maxBuffer: 64 * 1024 * 1024 });
      const last = out.stdout.trim().split("\n").pop() ?? "";
      const n = Math.min(FILE, N - k * FILE);
      if (!last.startsWith(`${n} created`)) throw new Error(`apply did not create ${n}: ${last}`);
    }
    const s = (performance.now() - t0) / 1000;
    return s;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

/** N BullMQ job schedulers (`upsertJobScheduler`, 500 in parallel, as bench:e2e); seconds. */
async function viaBullmq(): Promise<number> {
  const url = new URL(REDIS_URL);
  const connection = { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
  const queue = new Queue(`create-${process.pid}-${randomBytes(3).toString("hex")}`, { connection });
  try {
    await queue.waitUntilReady();
    const t0 = performance.now();
    for (let i = 0; i < N; i += 500) {
      const ids = Array.from({ length: Math.min(500, N - i) }, (_, k) => `s${i + k}`);
      await Promise.all(
        ids.map((id) =>
          queue.upsertJobScheduler(id, { pattern: "* * * * *" }, { name: "noop", opts: { removeOnComplete: true } }),
        ),
      );
    }
    return (performance.now() - t0) / 1000;
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}

async function pgReachable(): Promise<string | null> {
  try {
    await adminSql("SELECT 1");
    return null;
  } catch (err) {
    return String((err as Error).message ?? err);
  }
}

const systems = (args.systems ?? "").split(",").filter(Boolean);
const rows: { row: string; secs: number[]; load: string[] }[] = [];
const measure = async (row: string, fn: () => Promise<number>) => {
  const r = { row, secs: [] as number[], load: [] as string[] };
  for (let k = 0; k < ROUNDS; k++) {
    const before = load();
    const s = await fn();
    r.secs.push(s);
    r.load.push(`${before} → ${load()}`);
    console.log(`${row} round ${k + 1}: ${s.toFixed(2)} s (load ${before} → ${load()})`);
  }
  rows.push(r);
};

console.log(
  `bench:create: ${N} per-minute cron schedules, ${ROUNDS} round(s); node ${process.version}; load ${load()}`,
);
for (const system of systems) {
  if (system === "pg") {
    const why = await pgReachable();
    if (why !== null) {
      console.log(`pg: skipped, ${PG_URL} unreachable (${why})`);
      continue;
    }
  }
  if (system === "sqlite" || system === "pg") {
    await measure(`orbit ${system} · POST /v1/schedules/batch (1,000 per request)`, () => viaBatch(system));
    await measure(
      `orbit ${system} · orbit schedule apply -f (${FILE === N ? `one ${N}-entry file` : `${Math.ceil(N / FILE)} files of ${FILE}`})`,
      () => viaApply(system),
    );
  } else if (system === "bullmq") {
    const why = await redisUnreachable(REDIS_URL);
    if (why !== null) {
      console.log(`bullmq: skipped, Redis at ${REDIS_URL} unreachable (${why}); set BENCH_REDIS_URL`);
      continue;
    }
    await measure("bullmq · upsertJobScheduler (500 in parallel)", viaBullmq);
  } else throw new Error(`unknown system ${system} (sqlite, pg, bullmq)`);
}

console.log(`\n| how | N | seconds (each round) | load 1/5/15 min before → after |`);
console.log(`| --- | --- | --- | --- |`);
for (const r of rows) {
  console.log(`| ${r.row} | ${N} | ${r.secs.map((s) => s.toFixed(2)).join(" / ")} | ${r.load.join("; ")} |`);
}
