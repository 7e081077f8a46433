/**
 * A poll's answer that never reached its worker (a connection cut, a server killed after its
 * commit, a proxy that dropped it) leased its tasks to that worker all the same: they waited out
 * their lease (30 s, longer when the server restarted meanwhile) and went to the next attempt. The
 * worker's next poll after one that got no answer names the tasks it runs (`held`); the tasks
 * leased to it (to its process, when the poll names its `instance`) that it does not name are
 * answered again, their leases renewed, the same attempt (docs/workflows.md § Protocol).
 */
import type { Clock } from "../domain/clock.js";
import type { Execution } from "../domain/execution.js";
import type { PollRequestJson, TaskJson } from "../domain/worker-protocol.js";
import type { Store, StoreOps } from "../store/store.js";
import type { TaskLease } from "../store/task-store.js";

export interface RedeliverDeps {
  store: Store;
  clock: Clock;
  leaseMs: number;
  /** A report on the task is being handled here (its worker finished it): not handed again. */
  isReporting: (taskId: string) => boolean;
  /** The task's answer, its run's journaled steps read in `t`. */
  taskJson: (t: StoreOps, task: TaskLease, execution: Execution) => Promise<TaskJson>;
}

/** The tasks leased to the polling worker that it does not hold, at most `limit`, leased to it again. */
export async function leasedAgain(
  o: RedeliverDeps,
  heldIds: readonly string[],
  request: PollRequestJson,
  identity: string | null,
  limit: number,
): Promise<TaskJson[]> {
  const held = new Set(heldIds);
  return o.store.transaction(async (t) => {
    const now = o.clock.now();
    // Only this process's leases when the poll says which it is: another process polling under the
    // same worker_id runs the others (a tester's two "billing" workers each ran the other's steps).
    const instance = request.instance ?? null;
    const lost = (await t.listLeasedTo(request.worker_id, identity, instance, now, limit + held.size)).filter(
      (c) => !held.has(c.task.taskId) && !o.isReporting(c.task.taskId),
    );
    if (!lost.length) return [];
    const untilMs = now + o.leaseMs;
    const renewed = new Set(
      await t.extendLeases(
        request.worker_id,
        identity,
        lost.slice(0, limit).map((c) => c.task.taskId),
        untilMs,
        now,
      ),
    );
    const out: TaskJson[] = [];
    for (const c of lost) {
      if (renewed.has(c.task.taskId)) out.push(await o.taskJson(t, { ...c.task, leaseUntilMs: untilMs }, c.execution));
    }
    return out;
  });
}
