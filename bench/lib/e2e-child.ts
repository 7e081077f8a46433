/**
 * What every bench:e2e child process shares: its settings (argv[2], JSON), and the report of each
 * handler start to the parent over IPC, batched every 200 ms so that reporting costs the measured
 * process little. A start is `[key, nominalMs, startMs]`: the schedule, the occurrence's nominal
 * instant as the system under test states it, and `Date.now()` when the handler began.
 */

import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";

export type Start = [key: string, nominalMs: number, startMs: number];

export interface ChildSettings {
  /** Which system (see e2e-systems.ts). */
  system: string;
  schedules: number;
  concurrency: number | null;
  /** PostgreSQL: connection string; Redis: URL; SQLite: data folder. */
  target: string;
  /** PostgreSQL schema (Orbit, graphile-worker). */
  schema?: string;
  /** Orbit worker: the server's URL. */
  server?: string;
  /** BullMQ: the job schedulers' pattern (default `* * * * *`). */
  cron?: string;
  /** Orbit server: SQLite synchronous setting. */
  synchronous?: "full" | "normal";
  /** Orbit server: SQLite's page cache, MB. */
  sqliteCacheMb?: number;
}

export function settings(): ChildSettings {
  return JSON.parse(process.argv[2] ?? "{}") as ChildSettings;
}

let pending: Start[] = [];
let timer: NodeJS.Timeout | null = null;

/** Records one handler start; sent to the parent with the next batch. */
export function started(key: string, nominalMs: number): void {
  pending.push([key, nominalMs, Date.now()]);
  if (timer === null) timer = setTimeout(flush, 200);
}

function flush(): void {
  timer = null;
  if (!pending.length) return;
  const rows = pending;
  pending = [];
  process.send?.({ type: "starts", rows });
}

/**
 * BENCH_MEM=1: the child samples `process.memoryUsage()` each second and, when stopped, prints the
 * sample of its largest RSS (heap, external, array buffers; the rest of the RSS is native memory:
 * SQLite's page cache, V8's code and the allocator's free lists). BENCH_HEAPSNAP=dir: a V8 heap
 * snapshot of the child is written there when it is stopped (docs/benchmarks.md § Memory). The line
 * also gives the process's CPU time since it started (user + system).
 */
const MB = (n: number): string => `${(n / 1048576).toFixed(1)}`;
let peak: NodeJS.MemoryUsage | null = null;
let peakSpaces = "";
if (process.env.BENCH_MEM) {
  setInterval(() => {
    const m = process.memoryUsage();
    if (peak && m.rss <= peak.rss) return;
    peak = m;
    peakSpaces = getHeapSpaceStatistics()
      .filter((s) => s.space_size >= 1048576)
      .map((s) => `${s.space_name} ${MB(s.space_size)}`)
      .join(", ");
  }, 1000).unref();
}

function reportMemory(): void {
  if (!peak) return;
  const p = peak;
  const js = p.heapTotal + p.external;
  const cpu = process.cpuUsage();
  console.error(
    `memory ${settings().system} ${process.argv[1]?.replace(/.*\//, "")}: rss ${MB(p.rss)} MB = heap ${MB(p.heapTotal)} (used ${MB(p.heapUsed)}) + external ${MB(p.external)} (array buffers ${MB(p.arrayBuffers)}) + rest ${MB(p.rss - js)}; heap spaces: ${peakSpaces}; CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`,
  );
}

export function send(message: object): void {
  process.send?.(message);
}

/** Runs `stop` when the parent says so (or disconnects), then exits. */
export function onStop(stop: () => Promise<void>): void {
  let stopping = false;
  const go = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    flush();
    reportMemory();
    if (process.env.BENCH_HEAPSNAP) {
      const file = `${process.env.BENCH_HEAPSNAP}/${process.argv[1]?.replace(/.*\//, "").replace(/\.ts$/, "")}-${process.pid}.heapsnapshot`;
      console.error(`heap snapshot ${writeHeapSnapshot(file)}`);
    }
    await stop().catch((err) => console.error(err));
    process.exit(0);
  };
  process.on("message", (m: { type?: string }) => {
    if (m?.type === "stop") void go();
  });
  process.on("disconnect", () => void go());
}
