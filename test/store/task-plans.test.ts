/**
 * SQLite query plans of a poll's statements (docs/benchmarks.md § End to end, Run F): the candidates
 * come in the order of an index (0012), not from a sort of every pending task, and the lease UPDATE
 * finds its tasks by key, not by a scan of the (state, …) index. Both were O(pending tasks) per poll
 * in a herd. The statements are the store's own, caught as better-sqlite3 prepares them, and each is
 * explained with the parameters it ran with.
 */
import { afterEach, expect, it } from "vitest";
import { execution, T0, task } from "./fixtures/records.js";
import { caughtStore, planOf } from "./plan-capture.js";

let close = async (): Promise<void> => undefined;

afterEach(() => close());

it("leases by index order and by key, without reading every pending task", async () => {
  const caught = await caughtStore();
  close = caught.close;
  const { store, ran } = caught;
  for (const id of ["a", "b", "c"]) await store.insertExecution(execution(id));
  await store.transaction((tx) => tx.insertTasks(["a", "b", "c"].map((id) => task(`t-${id}`, id))));
  await store.transaction(async (tx) => {
    const offer = { workflows: [{ name: "W", version: "1.0.0" }], availableAtOrBeforeMs: T0, limit: 2 };
    const candidates = await tx.listClaimable(offer);
    const lease = { owner: "w", identity: null, instance: null, leaseUntilMs: T0 + 1000, maxAttempts: 1, backoffMs: 0 };
    expect(
      await tx.leaseTasks(
        candidates.map((c) => c.task.taskId),
        lease,
      ),
    ).toHaveLength(2);
  });
  const claim = planOf(ran.find((r) => r.sql.includes("AS has_steps")));
  expect(claim).toContain("USING INDEX orbit_worker_tasks_claim");
  expect(claim).not.toContain("TEMP B-TREE");
  const lease = planOf(ran.find((r) => r.sql.startsWith("UPDATE orbit_worker_tasks SET state = 'leased'")));
  expect(lease).toMatch(
    /orbit_worker_tasks USING (COVERING )?INDEX sqlite_autoindex_orbit_worker_tasks_1 \(task_id=\?\)/,
  );
});
