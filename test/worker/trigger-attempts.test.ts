/**
 * Issue 10 item 5, with a real worker process: `trigger.attempt` and `trigger.started_at`, as the
 * workflow sees them and as the API shows them, follow the retries (docs/design.md § What the
 * execution receives). Attempt 1 sees the start's instant; attempt 2 sees attempt 2 and the instant
 * its back-off ended (the `retry_at` of WorkflowAttemptFailed).
 */
import { expect, it } from "vitest";
import { formatInstant } from "../../src/time/format.js";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("the trigger follows retries", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("attempt 2 sees trigger.attempt 2 and its own started_at", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.createSchedule({ schedule_id: "retried", workflow: "TriggerPerAttempt", interval: "1h" });
    const { execution_id } = await client.triggerSchedule("retried");
    const id = execution_id!;
    const done = await waitFor("COMPLETED", async () => {
      const e = await client.getExecution(id);
      return e.status === "COMPLETED" ? e : undefined;
    });
    const events = await client.executionEvents(id);
    const created = events.find((e) => e.type === "WorkflowCreated")!.data.trigger as { started_at: string };
    const failed = events.find((e) => e.type === "WorkflowAttemptFailed")!.data as { retry_at: string };
    const retryAt = failed.retry_at;
    expect(formatInstant(Date.parse(retryAt))).toBe(retryAt); // RFC 3339 UTC, as every API time
    expect(retryAt).not.toBe(created.started_at);
    expect(cluster.marks(id).map((m) => m.split(" ").slice(2).join(" "))).toEqual([
      `attempt=1 trigger.attempt=1 trigger.started_at=${created.started_at}`,
      `attempt=2 trigger.attempt=2 trigger.started_at=${retryAt}`,
    ]);
    // The API shows the trigger of the attempt that ended the execution.
    expect(done.trigger).toMatchObject({ type: "manual", schedule_id: "retried", attempt: 2, started_at: retryAt });
  });
});
