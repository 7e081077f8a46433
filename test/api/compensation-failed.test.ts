/**
 * A cancelled run whose compensations or `onCancel` failed ends CANCELLED with a `CompensationFailed`
 * error that the execution, `orbit status` and the schedule's last outcome show (docs/workflows.md §
 * Cancellation and compensation); it was visible only in the event history, the worker logged
 * nothing, and the execution read like a clean cancel. Both dialects, over the worker protocol.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL } from "../helpers/db.js";
import { startDialectServer, type TestServer } from "./helpers.js";

const WORKFLOWS = [{ name: "Refunds", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];

for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`failed compensations (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startDialectServer(dialect, "orbit_compfail");
    });
    afterAll(async () => {
      await t?.stop();
    });
    const ok = (method: string, path: string, body?: unknown) => t.ok(method, path, body);

    it("ends CANCELLED with the failures as its error, shown on the execution and the schedule", async () => {
      await ok("POST", "/v1/workflows", { name: "Refunds", version: "1.0.0" });
      await ok("POST", "/v1/schedules", { schedule_id: "refunds", workflow: "Refunds", interval: "1h" });
      const { execution_id: id } = await ok("POST", "/v1/schedules/refunds/trigger");
      const { tasks } = await ok("POST", "/v1/worker/poll", { worker_id: "w", workflows: WORKFLOWS, wait_ms: 0 });
      const task = tasks[0].task_id as string;
      for (const [seq, step] of [
        [1, "charge"],
        [2, "ship"],
      ] as const) {
        await ok("POST", `/v1/worker/tasks/${task}/steps`, {
          worker_id: "w",
          step,
          seq,
          result: {},
          compensable: true,
        });
      }
      await ok("POST", `/v1/executions/${encodeURIComponent(id)}/cancel`, { reason: "customer left" });
      await ok("POST", `/v1/worker/tasks/${task}/compensating`, { worker_id: "w" });
      await ok("POST", `/v1/worker/tasks/${task}/compensations`, { worker_id: "w", step: "ship" });
      await ok("POST", `/v1/worker/tasks/${task}/compensations`, {
        worker_id: "w",
        step: "charge",
        error: { message: "refund failed", type: "PaymentError" },
      });
      const ended = await ok("POST", `/v1/worker/tasks/${task}/cancelled`, {
        worker_id: "w",
        error: { message: "mail server down", type: "Error" },
      });
      expect(ended.status).toBe("CANCELLED");
      expect(ended.cancel_reason).toBe("customer left");
      expect(ended.error).toEqual({
        type: "CompensationFailed",
        message: "compensation failed: charge: refund failed; onCancel: mail server down",
        failures: [
          { step: "charge", error: { message: "refund failed", type: "PaymentError" } },
          { step: null, on_cancel: true, error: { message: "mail server down", type: "Error" } },
        ],
      });
      const schedule = await ok("GET", "/v1/schedules/refunds");
      expect(schedule.last_outcome).toMatchObject({
        status: "CANCELLED",
        execution_id: id,
        error: "customer left; compensation failed: charge: refund failed; onCancel: mail server down",
        error_type: "CompensationFailed",
      });
    });

    it("a run that timed out and whose compensation failed ends FAILED with the timeout and what was not undone", async () => {
      await ok("POST", "/v1/executions", { workflow: "Refunds", execution_id: "slow", input: {}, run_timeout: "2s" });
      const { tasks } = await ok("POST", "/v1/worker/poll", { worker_id: "w", workflows: WORKFLOWS, wait_ms: 0 });
      const task = tasks.find((k: { execution_id: string }) => k.execution_id === "slow").task_id;
      await ok("POST", `/v1/worker/tasks/${task}/steps`, {
        ...{ worker_id: "w", step: "charge", seq: 1, result: {} },
        compensable: true,
      });
      t.clock.advance(3_000);
      await t.until(
        () => ok("GET", "/v1/executions/slow"),
        (e) => e.cancel_reason !== null && e.cancel_reason !== undefined,
        "the run timeout to ask for the cancel",
      );
      await ok("POST", `/v1/worker/tasks/${task}/compensating`, { worker_id: "w" });
      await ok("POST", `/v1/worker/tasks/${task}/compensations`, {
        worker_id: "w",
        step: "charge",
        error: { message: "refund failed", type: "PaymentError" },
      });
      const ended = await ok("POST", `/v1/worker/tasks/${task}/cancelled`, { worker_id: "w" });
      expect(ended.status).toBe("FAILED");
      expect(ended.error).toMatchObject({
        type: "Timeout",
        message: expect.stringMatching(/run_timeout.*; compensation failed: charge: refund failed$/),
        failures: [{ step: "charge", error: { message: "refund failed", type: "PaymentError" } }],
      });
    });

    it("a clean cancel has no error", async () => {
      await ok("POST", "/v1/executions", { workflow: "Refunds", execution_id: "clean", input: {} });
      const { tasks } = await ok("POST", "/v1/worker/poll", { worker_id: "w", workflows: WORKFLOWS, wait_ms: 0 });
      const task = tasks.find((k: { execution_id: string }) => k.execution_id === "clean").task_id;
      await ok("POST", `/v1/worker/tasks/${task}/steps`, {
        ...{ worker_id: "w", step: "charge", seq: 1, result: {} },
        compensable: true,
      });
      await ok("POST", "/v1/executions/clean/cancel", {});
      await ok("POST", `/v1/worker/tasks/${task}/compensating`, { worker_id: "w" });
      await ok("POST", `/v1/worker/tasks/${task}/compensations`, { worker_id: "w", step: "charge" });
      const ended = await ok("POST", `/v1/worker/tasks/${task}/cancelled`, { worker_id: "w" });
      expect({ status: ended.status, error: ended.error }).toEqual({ status: "CANCELLED", error: null });
    });
  });
}
