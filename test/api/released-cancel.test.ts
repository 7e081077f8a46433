/**
 * A task handed back (`release`, what `worker.close()` does at a deploy) after it journaled steps is
 * still an execution a worker ran: a cancel or a run_timeout must leave it to the next worker to
 * compensate (docs/workflows.md § Cancellation and compensation), not end it at once. Found by
 * trying the SDK as a user: a charge journaled, the worker closed for a deploy, a cancel ended the
 * execution CANCELLED and its refund never ran. Both dialects.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL } from "../helpers/db.js";
import { startDialectServer, type TestServer } from "./helpers.js";

const WORKFLOWS = [{ name: "Charge", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];

for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`a released task and its cancel (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startDialectServer(dialect, "orbit_released");
      await t.ok("POST", "/v1/workflows", { name: "Charge", version: "1.0.0" });
    });
    afterAll(async () => {
      await t?.stop();
    });

    const ok = (method: string, path: string, body?: unknown) => t.ok(method, path, body);
    /** The tasks a poll of `worker` leases (up to 10, without waiting). */
    const poll = async (worker: string) =>
      (await ok("POST", "/v1/worker/poll", { worker_id: worker, workflows: WORKFLOWS, max_tasks: 10, wait_ms: 0 }))
        .tasks;
    /** Starts `id`, leases it to w1, journals `steps` steps, and hands the task back. */
    const released = async (id: string, steps: number, extra: Record<string, unknown> = {}) => {
      await ok("POST", "/v1/executions", { workflow: "Charge", execution_id: id, input: {}, ...extra });
      const task = (await poll("w1")).find((k: { execution_id: string }) => k.execution_id === id);
      for (let seq = 1; seq <= steps; seq++) {
        await ok("POST", `/v1/worker/tasks/${task.task_id}/steps`, {
          ...{ worker_id: "w1", step: `charge-${seq}`, seq, result: { charged: seq } },
          compensable: true,
        });
      }
      expect((await ok("POST", "/v1/worker/release", { worker_id: "w1", task_ids: [task.task_id] })).released).toEqual([
        task.task_id,
      ]);
      return task.task_id as string;
    };
    const execution = (id: string) => ok("GET", `/v1/executions/${id}`);

    it("a cancel after the release leaves the journaled steps to the next worker to compensate", async () => {
      const taskId = await released("charged", 1);
      const cancelled = await ok("POST", "/v1/executions/charged/cancel", { reason: "after the deploy" });
      expect({ status: cancelled.status, reason: cancelled.cancel_reason }).toEqual({
        status: "RUNNING",
        reason: "after the deploy",
      });
      // The next worker gets it, told to cancel, with the step to compensate.
      const next = (await poll("w2")).find((k: { task_id: string }) => k.task_id === taskId);
      expect(next.cancel_requested).toBe("after the deploy");
      expect(next.steps.map((s: { name: string }) => s.name)).toEqual(["charge-1"]);
      await ok("POST", `/v1/worker/tasks/${taskId}/compensating`, { worker_id: "w2" });
      await ok("POST", `/v1/worker/tasks/${taskId}/compensations`, { worker_id: "w2", step: "charge-1" });
      await ok("POST", `/v1/worker/tasks/${taskId}/cancelled`, { worker_id: "w2" });
      const types = (await ok("GET", "/v1/executions/charged/events")).events.map((e: { type: string }) => e.type);
      expect(types).toContain("CompensationCompleted");
      expect((await execution("charged")).status).toBe("CANCELLED");
    });

    it("a run_timeout after the release is a cancel the next worker compensates", async () => {
      await released("slow", 2, { run_timeout: "10s" });
      t.clock.advance(11_000);
      const timedOut = await t.until(
        () => execution("slow"),
        (e) => e.cancel_reason !== undefined || e.status !== "RUNNING",
        "the run_timeout to fire",
      );
      expect(timedOut.status).toBe("RUNNING");
      expect(timedOut.cancel_reason).toMatch(/^timeout: run_timeout exceeded/);
    });

    it("one released before any step was journaled has nothing to compensate: it ends at once", async () => {
      await released("untouched", 0);
      const cancelled = await ok("POST", "/v1/executions/untouched/cancel", { reason: "never mind" });
      expect(cancelled.status).toBe("CANCELLED");
    });
  });
}
