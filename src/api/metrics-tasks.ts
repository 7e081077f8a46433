/**
 * The worker backlog on /metrics (docs/server.md § Metrics): the tasks ready to run that no worker
 * has taken, by workflow, and how long the oldest has waited. Without them a schedule whose
 * workflow no worker polls fired and "started" its executions on time while nothing ran: the
 * scrape showed only `orbit_executions{status="RUNNING"}` growing, the same as long runs.
 */
import { Gauge, type Registry } from "prom-client";
import type { ReadyTasks } from "../store/task-store.js";

/** Registers the two gauges; `read` is the scrape's read (null: not read, the gauges have no series). */
export function taskBacklogMetrics(
  registers: Registry[],
  read: () => Promise<{ tasks: ReadyTasks[] | null; nowMs: number | null }>,
): void {
  new Gauge({
    name: "orbit_tasks_ready",
    help: "Tasks ready to run that no worker has taken yet, by workflow (0 for a registered workflow with none): a backlog that stays means no worker polls the workflow, or too few",
    labelNames: ["workflow"],
    registers,
    async collect() {
      const { tasks } = await read();
      this.reset();
      for (const t of tasks ?? []) this.set({ workflow: t.workflow }, t.ready);
    },
  });
  new Gauge({
    name: "orbit_tasks_ready_oldest_seconds",
    help: "How long the workflow's oldest ready task has waited for a worker; 0 when none waits",
    labelNames: ["workflow"],
    registers,
    async collect() {
      const { tasks, nowMs } = await read();
      this.reset();
      if (nowMs === null) return;
      for (const t of tasks ?? []) {
        const waited = t.oldestAvailableMs === null ? 0 : Math.max(0, nowMs - t.oldestAvailableMs);
        this.set({ workflow: t.workflow }, waited / 1000);
      }
    },
  });
}
