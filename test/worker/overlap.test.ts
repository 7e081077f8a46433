/**
 * A schedule with `overlap: skip` and a workflow whose step runs until the test lets it end, run for
 * real with a worker: the test moves the server's clock to each occurrence (test/helpers/jump-clock.ts)
 * instead of waiting for it. The ledger and the counters agree, and
 * no two executions of it ever overlap.
 */
import { writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import { describeEachDialect } from "../helpers/db.js";
import { gateFile } from "./fixtures/workflows.js";
import { useWorkerCluster, waitFor } from "./harness.js";

/** The schedule's interval, as far as the test moves the server's clock for each occurrence. */
const INTERVAL_MS = 60_000;

describeEachDialect("overlap skip with a worker", (dialect) => {
  // A lease no jump of the test comes near: an execution sees two jumps of INTERVAL_MS at most.
  const cluster = useWorkerCluster(dialect, { leaseMs: 10 * INTERVAL_MS });

  it("skips the occurrences that come due while the slow execution runs", async () => {
    const { client } = cluster;
    const openGate = (id: string): void => writeFileSync(gateFile(cluster.file("marks"), id), "");
    const running = async () =>
      (await client.listExecutions({ schedule_id: "slow", status: "RUNNING" })).executions.map((e) => e.execution_id);
    await cluster.startWorker("A");
    await client.createSchedule({ schedule_id: "slow", workflow: "Slow", interval: "1m", overlap: "skip" });
    // Three times: the clock reaches an occurrence, which starts an execution; while its step runs
    // the clock reaches the next one (skipped: one is running); then the step ends. Each jump is one
    // interval and waits for the scheduler to act on it, so one occurrence comes due at a time (two
    // at once would make the older one missed, not skipped for overlap).
    for (let completed = 0; completed < 3; completed++) {
      await cluster.jumpServerClock(INTERVAL_MS);
      const id = await waitFor("an execution in its slow step", async () =>
        (await running()).find((x) => cluster.marks(x).length > 0),
      );
      const skipped = (await client.getSchedule("slow")).skipped;
      await cluster.jumpServerClock(INTERVAL_MS);
      await waitFor("an occurrence skipped", async () => (await client.getSchedule("slow")).skipped > skipped);
      openGate(id);
      await waitFor(`${id} completed`, async () => (await client.getExecution(id)).status === "COMPLETED");
    }
    await client.pauseSchedule("slow");
    await waitFor("no execution running", async () => {
      const ids = await running();
      for (const id of ids) openGate(id);
      return ids.length === 0;
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
