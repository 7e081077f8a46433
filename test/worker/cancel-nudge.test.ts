/**
 * A cancel reaches the worker holding the run at once (docs/workflows.md § Cancellation and
 * compensation): its parked poll is answered `heartbeat: true` and the worker heartbeats now,
 * instead of at its next heartbeat, 5 s later (a tester saw a 1 s cancel_previous schedule run six
 * executions side by side). Here the worker's heartbeat timer never fires (ORBIT_TEST_WORKER_TIMERS=off),
 * so it heartbeats only when asked: without the nudge the cancel of the API, of cancel_previous and of
 * a run_timeout is never heard by runs whose code waits on its signal alone.
 */
import { expect, it } from "vitest";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("a cancel heard without waiting for a heartbeat", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 600_000 });
  const startWorker = () => cluster.startWorker("A", { ORBIT_TEST_WORKER_TIMERS: "off" });
  const status = async (id: string) => (await cluster.client.getExecution(id)).status;

  it("an API cancel: compensated and CANCELLED though the worker's heartbeat timer never fires", async () => {
    const { client } = cluster;
    await startWorker();
    await client.startExecution({ execution_id: "nudged-1", workflow: "Compensating", input: {} });
    await waitFor("step ship", async () => cluster.marks("nudged-1").includes("A nudged-1 run ship"));
    await client.cancelExecution("nudged-1", { reason: "now" });
    await waitFor("CANCELLED", async () => (await status("nudged-1")) === "CANCELLED", 30_000);
    expect(cluster.marks("nudged-1")).toEqual([
      "A nudged-1 run ship",
      "A nudged-1 compensate charge",
      "A nudged-1 compensate reserve",
      "A nudged-1 onCancel now",
    ]);
  });

  it("a run_timeout: the timed-out run's code hears it at once", async () => {
    const { client } = cluster;
    await startWorker();
    const { value } = await client.startExecution({ workflow: "LateForDeadline", input: {}, run_timeout: "1s" });
    await waitFor(
      "the timed-out run's code to hear of it",
      async () => cluster.marks(value.execution_id).some((m) => m.includes(" heard timeout: ")),
      30_000,
    );
  });

  it("cancel_previous: the replaced run hears it at once", async () => {
    const { client } = cluster;
    await startWorker();
    await client.createSchedule({
      schedule_id: "replace",
      workflow: "Compensating",
      interval: "5s",
      overlap: "cancel_previous",
    });
    await cluster.jumpServerClock(5_000);
    const first = await waitFor("an execution at ship", async () =>
      (await client.listExecutions({ schedule_id: "replace", status: "RUNNING" })).executions.find((e) =>
        cluster.marks(e.execution_id).includes(`A ${e.execution_id} run ship`),
      ),
    );
    await client.pauseSchedule("replace", {}); // no third occurrence
    await client.triggerSchedule("replace"); // a start under cancel_previous replaces the first
    await waitFor("the replaced run CANCELLED", async () => (await status(first.execution_id)) === "CANCELLED", 30_000);
  });

  it("a worker with no free slot: its watch poll is nudged, and the run hears the cancel", async () => {
    const { client } = cluster;
    await cluster.startWorker("A", { ORBIT_TEST_WORKER_TIMERS: "off", ORBIT_TEST_WORKER_CONCURRENCY: "1" });
    await client.startExecution({ execution_id: "full-1", workflow: "Compensating", input: {} });
    await waitFor("step ship", async () => cluster.marks("full-1").includes("A full-1 run ship"));
    await client.cancelExecution("full-1", { reason: "now" });
    await waitFor("CANCELLED", async () => (await status("full-1")) === "CANCELLED", 30_000);
    expect(cluster.marks("full-1").at(-1)).toBe("A full-1 onCancel now");
  });
});
