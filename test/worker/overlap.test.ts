/**
 * A 1-second schedule with `overlap: skip` and a workflow that takes longer than that, run for real
 * with a worker: the ledger and the counters agree, and no two executions of it ever overlap.
 */
import { expect, it } from "vitest";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("overlap skip with a worker", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("skips the occurrences that come due while the slow execution runs", async () => {
    const { client } = cluster;
    await cluster.startWorker("A", { ORBIT_TEST_STEP_MS: "2500" });
    await client.createSchedule({ schedule_id: "slow", workflow: "Slow", interval: "1s", overlap: "skip" });
    await waitFor("three completed executions", async () => {
      const page = await client.listExecutions({ schedule_id: "slow", status: "COMPLETED" });
      return page.executions.length >= 3;
    });
    await client.pauseSchedule("slow");
    await waitFor("no execution running", async () => {
      const page = await client.listExecutions({ schedule_id: "slow", status: "RUNNING" });
      return page.executions.length === 0;
    });
    const schedule = await client.getSchedule("slow");
    const executions = (await client.listExecutions({ schedule_id: "slow" })).executions.reverse();
    const ledger = (await client.listOccurrences("slow", { limit: 1000 })).occurrences;
    const started = ledger.filter((o) => o.kind === "started");
    const skipped = ledger.filter((o) => o.kind === "skipped");
    expect(executions.every((e) => e.status === "COMPLETED")).toBe(true);
    expect(started.map((o) => o.execution_id).sort()).toEqual(executions.map((e) => e.execution_id).sort());
    expect(schedule.fired).toBe(executions.length);
    expect(skipped.every((o) => o.reason === "overlap")).toBe(true);
    const skippedCount = skipped.reduce((n, o) => n + (o.count ?? 1), 0);
    expect(schedule.skipped).toBe(skippedCount);
    expect(skippedCount).toBeGreaterThanOrEqual(executions.length - 1);
    // Each execution started after the one before it ended (its occurrence was skipped meanwhile).
    for (let i = 1; i < executions.length; i++) {
      expect(Date.parse(executions[i]!.created_at)).toBeGreaterThanOrEqual(Date.parse(executions[i - 1]!.ended_at!));
    }
    // Every workflow step ran once per execution.
    for (const e of executions) expect(cluster.marks(e.execution_id)).toEqual([`A ${e.execution_id} run slow`]);
  });
});
