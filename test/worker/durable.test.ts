/**
 * Durable execution with real processes: a worker killed mid-step is replaced without re-running
 * completed steps; failures are retried by the policy; continue-as-new keeps the execution RUNNING.
 */
import { expect, it } from "vitest";
import { describeEachDialect } from "../helpers/db.js";
import { stop, useWorkerCluster, waitFor } from "./harness.js";

/** Far longer than any stall of a loaded machine: a lease ends only when a test jumps the server's clock. */
const LEASE_MS = 30_000;

describeEachDialect("durable execution", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: LEASE_MS });

  it("replaces a worker killed during step 2 of 3 without running step 1 again", async () => {
    const { client } = cluster;
    const a = await cluster.startWorker("A");
    const { value: started } = await client.startExecution({
      execution_id: "kill-1",
      workflow: "ThreeSteps",
      input: {},
    });
    expect(started.status).toBe("RUNNING");
    await waitFor("step two on A", async () => cluster.marks("kill-1").includes("A kill-1 run two attempt=1"));
    await stop(a, "SIGKILL");
    // A's lease ends: the reaper hands the task back (attempt 2) for B.
    await cluster.jumpServerClock(LEASE_MS + 1000);
    await cluster.startWorker("B");
    const done = await waitFor("COMPLETED", async () => {
      const e = await client.getExecution("kill-1");
      return e.status === "COMPLETED" ? e : undefined;
    });
    expect(done.result).toEqual({ total: 3 });
    expect(cluster.marks("kill-1")).toEqual([
      "A kill-1 run one",
      "A kill-1 run two attempt=1",
      "B kill-1 run two attempt=2",
      "B kill-1 run three",
    ]);
    const events = await client.executionEvents("kill-1");
    const killedId = events[1]?.data.worker_id;
    // A's last poll can outlive A by a moment on the server and claim the requeued task; it hands
    // it back at once (same attempt) when it finds its connection gone. That pair is A's, never B's.
    const handedBack = events.findIndex((e) => e.type === "WorkflowTaskReleased");
    if (handedBack !== -1) {
      expect(events.slice(handedBack - 1, handedBack + 1).map((e) => [e.type, e.data.worker_id])).toEqual([
        ["WorkflowTaskStarted", killedId],
        ["WorkflowTaskReleased", killedId],
      ]);
      events.splice(handedBack - 1, 2);
    }
    expect(events.map((e) => e.type)).toEqual([
      "WorkflowCreated",
      "WorkflowTaskStarted",
      "StepCompleted",
      "WorkflowTaskLeaseExpired",
      "WorkflowTaskStarted",
      "StepCompleted",
      "StepCompleted",
      "WorkflowCompleted",
    ]);
  });

  it("retries a failing step by the policy, then fails the execution with the error", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.startExecution({ execution_id: "flaky-1", workflow: "Flaky", input: {} });
    const failed = await waitFor("FAILED", async () => {
      const e = await client.getExecution("flaky-1");
      return e.status === "FAILED" ? e : undefined;
    });
    expect(failed.error).toEqual({ message: "card declined", type: "Error", step: "charge" });
    expect(cluster.marks("flaky-1")).toEqual([
      "A flaky-1 run validate",
      "A flaky-1 run charge attempt=1",
      "A flaky-1 run charge attempt=2",
      "A flaky-1 run charge attempt=3",
    ]);
    const events = await client.executionEvents("flaky-1");
    expect(events.filter((e) => e.type === "WorkflowAttemptFailed").map((e) => e.data.attempt)).toEqual([1, 2]);
    expect(events.at(-1)?.type).toBe("WorkflowFailed");
  });

  it("keeps a continued-as-new execution RUNNING until its final run ends", async () => {
    const { client } = cluster;
    await cluster.startWorker("A", { ORBIT_TEST_STEP_MS: "300" });
    await client.startExecution({ execution_id: "loop-1", workflow: "Looper", input: { of: 3 } });
    const seen = new Set<string>();
    const done = await waitFor("COMPLETED", async () => {
      const e = await client.getExecution("loop-1");
      seen.add(e.status);
      return e.status === "COMPLETED" ? e : undefined;
    });
    expect([...seen]).toEqual(["RUNNING", "COMPLETED"]);
    expect(done.result).toEqual({ runs: 3 });
    expect(done.input).toEqual({ n: 3, of: 3 });
    expect(cluster.marks("loop-1")).toEqual(["A loop-1 run 1 n=1", "A loop-1 run 2 n=2", "A loop-1 run 3 n=3"]);
    const events = await client.executionEvents("loop-1");
    expect(events.filter((e) => e.type === "WorkflowContinuedAsNew").map((e) => e.data.run)).toEqual([2, 3]);
    expect(events.filter((e) => e.type === "WorkflowCompleted")).toHaveLength(1);
  });
});
