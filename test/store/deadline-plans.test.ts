/**
 * SQLite query plans of the timeout sweeper's reads (docs/benchmarks.md § End to end, Run AQ): the
 * earliest deadline and the expired ones come from the partial deadline indexes (0005), not from the
 * status index, which holds every running execution and was read whole at each call. The statements
 * are the store's own, caught as better-sqlite3 prepares them, and each is explained with the
 * parameters it ran with.
 */
import { afterEach, expect, it } from "vitest";
import { execution, T0 } from "./fixtures/records.js";
import { caughtStore, planOf } from "./plan-capture.js";

let close = async (): Promise<void> => undefined;

afterEach(() => close());

it("finds deadlines through the deadline indexes, not through every running execution", async () => {
  const caught = await caughtStore();
  close = caught.close;
  const { store, ran } = caught;
  for (const id of ["a", "b", "c", "d"]) await store.insertExecution(execution(id));
  await store.transaction((tx) => tx.setExecutionDeadlines(["b"], T0 + 5_000, null));
  await store.transaction((tx) => tx.setExecutionDeadlines(["c"], null, T0 + 3_000));
  expect(await store.transaction((tx) => tx.nextDeadlineMs())).toBe(T0 + 3_000);
  expect(await store.transaction((tx) => tx.listExpiredDeadlines(T0 + 10_000, 10))).toEqual([
    { executionId: "c", kind: "run_timeout" },
    { executionId: "b", kind: "start_timeout" },
  ]);
  const plans = ran.filter((r) => r.sql.includes("_deadline_ms") && r.sql.startsWith("SELECT")).map((r) => planOf(r));
  expect(plans).toHaveLength(3);
  for (const plan of plans) {
    expect(plan).not.toContain("orbit_executions_status");
    expect(plan).not.toContain("TEMP B-TREE");
    expect(plan).toMatch(/USING (COVERING )?INDEX orbit_executions_(start|run)_deadline/);
  }
});
