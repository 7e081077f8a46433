/**
 * The exactly-once check of a cluster run, read from the database (adapted from the idea of
 * test/scheduler/restart.test.ts): for every schedule, every occurrence from its first one after
 * creation to the last one the ledger accounts for was either started exactly once (a `started`
 * row and its execution) or recorded as skipped with a reason (a `skipped` row, or one range row for
 * many missed occurrences); never both, never twice, never lost. Occurrences still held in the
 * schedule's buffer at the end are pending, not lost.
 */
import pg from "pg";
import { compiledFor } from "../../src/scheduler/compiled.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { ScheduleRow } from "../../src/store/rows.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";

/** The store keeps at most this many ledger rows per schedule (docs/design.md § The model): older ones may be gone. */
const LEDGER_RETENTION = 1000;

export interface ScheduleCount {
  scheduleId: string;
  /** Occurrences started (one execution each). */
  started: number;
  /** Skipped occurrences by reason (`overlap`, `concurrency`, `missed`, `buffer_full`). */
  skipped: Record<string, number>;
  /** Occurrences still in the buffer at the end. */
  pending: number;
  deadLetters: number;
  /** Occurrences checked: from the first after creation to the last the ledger accounts for. */
  checked: number;
  violations: string[];
}

export interface LedgerSummary {
  schedules: ScheduleCount[];
  started: number;
  skipped: Record<string, number>;
  pending: number;
  violations: string[];
}

export interface CheckOptions {
  database: string;
  schema: string;
  /**
   * Occurrences up to this instant must be accounted for (the run's end minus a little: what was due
   * in the last second may not have fired yet). Default: only up to the last accounted occurrence.
   */
  accountedUntilMs?: number;
}

export async function checkLedger(o: CheckOptions): Promise<LedgerSummary> {
  const store = new PostgresStore({ connectionString: o.database, searchPath: o.schema, maxConnections: 2 });
  const client = new pg.Client({ connectionString: o.database, options: `-c search_path=${o.schema}` });
  await store.open();
  await client.connect();
  try {
    const ids = (await client.query<{ id: string }>("SELECT schedule_id AS id FROM orbit_schedules ORDER BY 1")).rows;
    const schedules: ScheduleCount[] = [];
    for (const { id } of ids) {
      const row = await store.getSchedule(id);
      if (row === null) continue;
      const executions = (
        await client.query<{ id: string }>("SELECT execution_id AS id FROM orbit_executions WHERE schedule_id = $1", [
          id,
        ])
      ).rows.map((r) => r.id);
      const ledger = await store.listOccurrences(id, { limit: 100_000 });
      schedules.push(checkSchedule(row, executions, ledger, o.accountedUntilMs));
    }
    const skipped: Record<string, number> = {};
    for (const s of schedules) for (const [k, v] of Object.entries(s.skipped)) skipped[k] = (skipped[k] ?? 0) + v;
    return {
      schedules,
      started: schedules.reduce((n, s) => n + s.started, 0),
      skipped,
      pending: schedules.reduce((n, s) => n + s.pending, 0),
      violations: schedules.flatMap((s) => s.violations),
    };
  } finally {
    await client.end();
    await store.close();
  }
}

type LedgerRow = Awaited<ReturnType<PostgresStore["listOccurrences"]>>[number];

export function checkSchedule(
  row: ScheduleRow,
  executionIds: readonly string[],
  ledger: readonly LedgerRow[],
  accountedUntilMs?: number,
): ScheduleCount {
  const id = row.scheduleId;
  const { timing } = compiledFor(row);
  const violations: string[] = [];
  const bad = (msg: string) => violations.push(`${id}: ${msg}`);
  const at = (o: number) => formatInstant(o);

  // Nominal executions only: manual triggers and backfills are not occurrences of the timing.
  const nominal = new Map<number, string>();
  for (const e of executionIds) {
    const rest = e.slice(id.length + 1);
    if (!e.startsWith(`${id}:`) || rest.startsWith("manual:")) continue;
    try {
      nominal.set(parseInstant(rest), e);
    } catch {
      // not a nominal id
    }
  }

  const seen = new Map<number, string>();
  const account = (o: number, what: string) => {
    const before = seen.get(o);
    if (before !== undefined) bad(`${at(o)} is both ${before} and ${what}`);
    else seen.set(o, what);
  };
  const skipped: Record<string, number> = {};
  const buffered = new Set<number>();
  let deadLetters = 0;
  let startedRows = 0;
  for (const r of ledger) {
    if (r.kind === "started") {
      if (r.occurrenceMs === null || !nominal.has(r.occurrenceMs)) {
        if (r.executionId?.includes(":manual:") !== true) bad(`started row ${r.executionId} has no execution`);
        continue;
      }
      startedRows++;
      account(r.occurrenceMs, "started");
    } else if (r.kind === "skipped" && r.rangeFromMs !== null) {
      let n = 0;
      for (let o: number | null = r.rangeFromMs; o !== null && o <= (r.rangeToMs as number); o = timing.nextAfter(o)) {
        // A range lists the not-started occurrences; those started in the same fire are excluded.
        if (!nominal.has(o)) {
          account(o, `skipped (${r.reason ?? "missed"})`);
          n++;
        }
      }
      if (n !== r.count)
        bad(`the missed range ${at(r.rangeFromMs)}…${at(r.rangeToMs as number)} counts ${r.count}, holds ${n}`);
      skipped[r.reason ?? "missed"] = (skipped[r.reason ?? "missed"] ?? 0) + r.count;
    } else if (r.kind === "skipped") {
      if (r.reason === null) bad(`${at(r.occurrenceMs as number)} skipped without a reason`);
      account(r.occurrenceMs as number, `skipped (${r.reason})`);
      skipped[r.reason ?? "?"] = (skipped[r.reason ?? "?"] ?? 0) + 1;
    } else if (r.kind === "buffered" && r.occurrenceMs !== null) buffered.add(r.occurrenceMs);
    else if (r.kind === "dead_letter") deadLetters++;
  }
  const trimmed = ledger.length >= LEDGER_RETENTION;
  for (const [o, e] of nominal) if (!seen.has(o) && !trimmed) bad(`execution ${e} has no started ledger row`);

  const pendingAtEnd = new Set(row.buffered.filter((b): b is number => typeof b === "number"));
  const accounted = [...seen.keys()].sort((a, b) => a - b);
  let checked = 0;
  if (accounted.length > 0) {
    const firstAfterCreate = timing.nextAfter(row.createdMs - 1);
    const from = trimmed ? (accounted[0] as number) : Math.min(firstAfterCreate ?? Infinity, accounted[0] as number);
    const until = Math.max(accounted[accounted.length - 1] as number, accountedUntilMs ?? 0);
    for (let o: number | null = from; o !== null && o <= until; o = timing.nextAfter(o)) {
      checked++;
      if (seen.has(o) || pendingAtEnd.has(o)) continue;
      // The occurrence the schedule waits on now is not lost; it is next.
      if (row.nextFireMs !== null && o >= row.nextFireMs) continue;
      bad(`${at(o)} was neither started nor skipped${buffered.has(o) ? " (buffered, then lost)" : ""}`);
    }
  } else if (accountedUntilMs !== undefined && row.createdMs < accountedUntilMs - 10_000) {
    bad("nothing was ever started or skipped");
  }
  return {
    scheduleId: id,
    started: startedRows,
    skipped,
    pending: pendingAtEnd.size,
    deadLetters,
    checked,
    violations,
  };
}
