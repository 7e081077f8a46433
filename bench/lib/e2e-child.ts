/**
 * What every bench:e2e child process shares: its settings (argv[2], JSON), and the report of each
 * handler start to the parent over IPC, batched every 200 ms so that reporting costs the measured
 * process little. A start is `[key, nominalMs, startMs]`: the schedule, the occurrence's nominal
 * instant as the system under test states it, and `Date.now()` when the handler began.
 */

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
    await stop().catch((err) => console.error(err));
    process.exit(0);
  };
  process.on("message", (m: { type?: string }) => {
    if (m?.type === "stop") void go();
  });
  process.on("disconnect", () => void go());
}
