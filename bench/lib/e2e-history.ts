/**
 * bench:e2e `--history N`: gives each of an Orbit SQLite server's schedules N earlier minutes of
 * completed executions before the measured minutes, as a server that has run for a while has
 * (docs/benchmarks.md § Run N: the fire slows as history grows). Written minute by minute for every
 * schedule, as the server itself would have: the execution, its three events, its worker task and
 * its `started` ledger row, the same columns and shapes the server writes. A second connection to
 * the server's WAL database, while the server idles between set-up and the first measured minute.
 */
import Database from "better-sqlite3";
import { newTimeOrderedId } from "../../src/domain/ids.js";

const MINUTE_MS = 60_000;

export function seedHistory(file: string, scheduleIds: readonly string[], minutes: number, beforeMs: number): void {
  const db = new Database(file);
  db.pragma("busy_timeout = 30000");
  const execution = db.prepare(
    `INSERT INTO orbit_executions (execution_id, workflow, version, input, status, schedule_id, "trigger", result,
       run, attempt, created_ms, started_ms, ended_ms) VALUES (?, 'Noop', '1.0.0', '{}', 'COMPLETED', ?, ?, '{}', 1, 1, ?, ?, ?)`,
  );
  // A schema whose events carry their execution's created instant gets it too.
  const keyed = (db.pragma("table_info(orbit_execution_events)") as { name: string }[]).some(
    (c) => c.name === "execution_created_ms",
  );
  const insertEvent = db.prepare(
    keyed
      ? "INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms, execution_created_ms) VALUES (?, ?, ?, ?, ?, ?)"
      : "INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms) VALUES (?, ?, ?, ?, ?)",
  );
  const event = (id: string, seq: number, type: string, data: string, atMs: number, createdMs: number) =>
    keyed ? insertEvent.run(id, seq, type, data, atMs, createdMs) : insertEvent.run(id, seq, type, data, atMs);
  // And one whose tasks do (0015), with the same instant.
  const taskKeyed = (db.pragma("table_info(orbit_worker_tasks)") as { name: string }[]).some(
    (c) => c.name === "execution_created_ms",
  );
  const insertTask = db.prepare(
    `INSERT INTO orbit_worker_tasks (task_id, execution_id, run, workflow, version, state, attempt, lease_owner,
       lease_until_ms, available_ms, created_ms, max_attempts, backoff_ms${taskKeyed ? ", execution_created_ms" : ""})
     VALUES (?, ?, 1, 'Noop', '1.0.0', 'done', 1, 'bench', ?, ?, ?, 3, 1000${taskKeyed ? ", ?" : ""})`,
  );
  const task = (id: string, executionId: string, leaseUntilMs: number, createdMs: number) =>
    taskKeyed
      ? insertTask.run(id, executionId, leaseUntilMs, createdMs, createdMs, createdMs)
      : insertTask.run(id, executionId, leaseUntilMs, createdMs, createdMs);
  const ledger = db.prepare(
    `INSERT INTO orbit_occurrences (schedule_id, kind, occurrence_ms, "count", execution_id, recorded_ms)
     VALUES (?, 'started', ?, 1, ?, ?)`,
  );
  const minute = db.transaction((at: number) => {
    const instant = new Date(at).toISOString().replace(".000Z", "Z");
    for (const s of scheduleIds) {
      const id = `${s}:${instant}`;
      const trigger = JSON.stringify({
        type: "cron",
        schedule_id: s,
        occurrence_id: id,
        scheduled_for: instant,
        started_at: new Date(at + 1).toISOString(),
        timezone: "UTC",
        attempt: 1,
      });
      execution.run(id, s, trigger, at + 30, at + 30, at + 500);
      const data = `{"workflow":"Noop","version":"1.0.0","input":{},"schedule_id":${JSON.stringify(s)},"trigger":${trigger}}`;
      event(id, 1, "WorkflowCreated", data, at + 30, at + 30);
      event(id, 2, "WorkflowTaskStarted", '{"worker_id":"bench","run":1,"attempt":1}', at + 200, at + 30);
      event(id, 3, "WorkflowCompleted", '{"result":{}}', at + 500, at + 30);
      task(newTimeOrderedId(), id, at + 30_200, at + 30);
      ledger.run(s, at, id, at + 1);
    }
  });
  const first = Math.floor(beforeMs / MINUTE_MS) * MINUTE_MS - minutes * MINUTE_MS;
  const t0 = performance.now();
  for (let k = 0; k < minutes; k++) {
    minute(first + k * MINUTE_MS);
    if ((k + 1) % 10 === 0 || k + 1 === minutes) {
      console.error(
        `history: ${k + 1} of ${minutes} minutes for ${scheduleIds.length} schedules (${Math.round(performance.now() - t0)} ms)`,
      );
    }
  }
  db.close();
}
