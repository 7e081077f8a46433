/**
 * A worker that leases the same task again (docs/workflows.md § Leases): its first lease ended
 * while the server was away longer than the lease, the reaper handed the task out again as attempt
 * 2, and the same worker_id took it. Reports naming attempt 1 are refused (409) and change nothing;
 * attempt 2's pass. Before, the first attempt's late step and completion were taken for the
 * second's, and both attempts ran the remaining steps at once (found by killing a server under
 * load). Both dialects.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

const LEASE_MS = 30_000;
const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];

const schema = `orbit_stale_${randomBytes(5).toString("hex")}`;
for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`a stale attempt of the same worker (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      if (dialect === "postgres") await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({
        ...(dialect === "postgres" ? { database: PG_URL!, databaseSchema: schema } : {}),
        worker: { leaseMs: LEASE_MS, pollTimeoutMs: 0 },
      });
      await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
    });
    afterAll(async () => {
      await t.stop();
      if (dialect === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    });

    const poll = async () =>
      (await t.call("POST", "/v1/worker/poll", { worker_id: "w1", workflows: offer, max_tasks: 1, wait_ms: 0 })).body
        .tasks as { task_id: string; attempt: number }[];

    it("refuses the first attempt's reports once the same worker holds the second", async () => {
      await t.call("POST", "/v1/executions", { execution_id: "e-1", workflow: "W", input: {} });
      const [first] = await poll();
      expect(first?.attempt).toBe(1);
      const task = first!.task_id;
      t.clock.advance(LEASE_MS + 1); // the lease ends; the reaper hands the task back (attempt 2, after 1 s)
      const second = await t.until(
        async () => {
          t.clock.advance(1000);
          return poll();
        },
        (tasks) => tasks.length > 0,
        "the task leased again",
      );
      expect(second.map((x) => [x.task_id, x.attempt])).toEqual([[task, 2]]);

      const step = { step: "b", seq: 1, result: "from attempt 1", compensable: false };
      const stale = await t.call("POST", `/v1/worker/tasks/${task}/steps`, { worker_id: "w1", attempt: 1, ...step });
      expect({ status: stale.status, code: stale.body.code }).toEqual({ status: 409, code: "CONFLICT" });
      expect(stale.body.message).toBe(
        `worker task ${task} (execution e-1): attempt 1's lease ended and attempt 2 holds the task now; stop working on attempt 1`,
      );
      const staleDone = await t.call("POST", "/v1/worker/complete", {
        worker_id: "w1",
        tasks: [{ task_id: task, attempt: 1, result: { from: 1 } }],
      });
      expect(staleDone.body.tasks[task].code).toBe("CONFLICT");
      const events = (await t.call("GET", "/v1/executions/e-1/events")).body.events.map(
        (e: { type: string }) => e.type,
      );
      expect(events).not.toContain("StepCompleted");
      expect((await t.call("GET", "/v1/executions/e-1")).body.status).toBe("RUNNING");

      const fresh = await t.call("POST", `/v1/worker/tasks/${task}/complete`, {
        worker_id: "w1",
        attempt: 2,
        result: { from: 2 },
      });
      expect(fresh.status).toBe(200);
      expect((await t.call("GET", "/v1/executions/e-1")).body).toMatchObject({
        status: "COMPLETED",
        result: { from: 2 },
      });
      // Attempt 2's completion sent again (its answer lost): COMPLETED as before, no second end.
      const again = await t.call("POST", `/v1/worker/tasks/${task}/complete`, {
        worker_id: "w1",
        attempt: 2,
        result: { from: 2 },
      });
      expect({ status: again.status, result: again.body.result }).toEqual({ status: 200, result: { from: 2 } });
      // Attempt 1's, with attempt 2's result or its own, stays refused.
      for (const result of [{ from: 2 }, { from: 1 }]) {
        const stale1 = await t.call("POST", "/v1/worker/complete", {
          worker_id: "w1",
          tasks: [{ task_id: task, attempt: 1, result }],
        });
        expect(stale1.body.tasks[task].code).toBe("CONFLICT");
      }
    });

    it("answers a completion sent again after its answer was lost as it was answered, and nothing else", async () => {
      await t.call("POST", "/v1/executions", { execution_id: "e-2", workflow: "W", input: {} });
      const [leased] = await poll();
      const task = leased!.task_id;
      const complete = (body: object) => t.call("POST", "/v1/worker/complete", { worker_id: "w1", ...body });
      const first = await complete({ tasks: [{ task_id: task, result: { n: 1, list: [1, "a"] } }] });
      expect(first.body.tasks[task]).toEqual({ status: "COMPLETED" });
      const eventsBefore = (await t.call("GET", "/v1/executions/e-2/events")).body.events.length;

      const resent = await complete({ tasks: [{ task_id: task, attempt: 1, result: { n: 1, list: [1, "a"] } }] });
      expect(resent.body.tasks[task]).toEqual({ status: "COMPLETED" });
      const single = await t.call("POST", `/v1/worker/tasks/${task}/complete`, {
        worker_id: "w1",
        result: { n: 1, list: [1, "a"] },
      });
      expect({ status: single.status, state: single.body.status }).toEqual({ status: 200, state: "COMPLETED" });

      // Another result, another worker or another attempt is not the same completion: refused.
      const other = [
        complete({ tasks: [{ task_id: task, result: { n: 2, list: [1, "a"] } }] }),
        t.call("POST", "/v1/worker/complete", {
          worker_id: "w2",
          tasks: [{ task_id: task, result: { n: 1, list: [1, "a"] } }],
        }),
        complete({ tasks: [{ task_id: task, attempt: 2, result: { n: 1, list: [1, "a"] } }] }),
      ];
      for (const r of await Promise.all(other)) expect(r.body.tasks[task].code).toBe("CONFLICT");
      const changed = await t.call("POST", `/v1/worker/tasks/${task}/complete`, { worker_id: "w1", result: "other" });
      expect({ status: changed.status, code: changed.body.code }).toEqual({ status: 409, code: "CONFLICT" });

      expect((await t.call("GET", "/v1/executions/e-2/events")).body.events.length).toBe(eventsBefore);
      expect((await t.call("GET", "/v1/executions/e-2")).body).toMatchObject({
        status: "COMPLETED",
        result: { n: 1, list: [1, "a"] },
      });
    });

    it("records a report made after a cancel once, however often the worker sends it again", async () => {
      const types = async (id: string) =>
        (await t.call("GET", `/v1/executions/${id}/events`)).body.events.map((e: { type: string }) => e.type);
      for (const [id, report] of [
        ["after-1", "batch"],
        ["after-2", "single"],
        ["after-3", "fail"],
      ] as const) {
        await t.call("POST", "/v1/executions", { execution_id: id, workflow: "W", input: {} });
        const [leased] = await poll();
        const task = leased!.task_id;
        await t.call("POST", `/v1/executions/${id}/cancel`, { reason: "stop" });
        const send = () =>
          report === "batch"
            ? t.call("POST", "/v1/worker/complete", { worker_id: "w1", tasks: [{ task_id: task, result: { n: 1 } }] })
            : report === "single"
              ? t.call("POST", `/v1/worker/tasks/${task}/complete`, { worker_id: "w1", result: { n: 1 } })
              : t.call("POST", `/v1/worker/tasks/${task}/fail`, {
                  worker_id: "w1",
                  error: { message: "boom", type: "Error" },
                  retryable: true,
                });
        for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
        const after = (await types(id)).filter((x: string) => x.endsWith("AfterCancel"));
        expect({ id, after }).toEqual({
          id,
          after: [report === "fail" ? "FailureAfterCancel" : "CompletionAfterCancel"],
        });
      }
      // Another result after the cancel is another report: recorded.
      const [leased] = await (async () => {
        await t.call("POST", "/v1/executions", { execution_id: "after-4", workflow: "W", input: {} });
        return poll();
      })();
      await t.call("POST", "/v1/executions/after-4/cancel", { reason: "stop" });
      for (const n of [1, 2]) {
        await t.call("POST", "/v1/worker/complete", {
          worker_id: "w1",
          tasks: [{ task_id: leased!.task_id, result: { n } }],
        });
      }
      expect((await types("after-4")).filter((x: string) => x === "CompletionAfterCancel")).toHaveLength(2);
    });
  });
}
