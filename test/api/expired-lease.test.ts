/**
 * A lease is over at its end, not when the reaper gets to it (issue 11, item 10; docs/workflows.md §
 * Leases): with the reaper off, a worker whose lease ran out may not heartbeat it back to life,
 * journal a step, complete, fail, continue, compensate, cancel or release; each report is refused
 * (heartbeat: "lost"; the others 409 CONFLICT) and changes nothing. Both dialects.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

const LEASE_MS = 30_000;
const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];

const schema = `orbit_lease_${randomBytes(5).toString("hex")}`;
for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`an expired, unreaped lease (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      if (dialect === "postgres") await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({
        ...(dialect === "postgres" ? { database: PG_URL!, databaseSchema: schema } : {}),
        worker: { reaper: false, leaseMs: LEASE_MS, pollTimeoutMs: 0 },
      });
      await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
    });
    afterAll(async () => {
      await t.stop();
      if (dialect === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    });

    /** Starts an execution and leases its task to w1; returns the task id. */
    const leased = async (id: string): Promise<string> => {
      await t.call("POST", "/v1/executions", { execution_id: id, workflow: "W", input: {} });
      const r = await t.call("POST", "/v1/worker/poll", {
        worker_id: "w1",
        workflows: offer,
        max_tasks: 1,
        wait_ms: 0,
      });
      expect(r.body.tasks.map((x: { execution_id: string }) => x.execution_id)).toEqual([id]);
      return r.body.tasks[0].task_id as string;
    };
    const state = async (id: string) => {
      const e = (await t.call("GET", `/v1/executions/${id}`)).body;
      const events = (await t.call("GET", `/v1/executions/${id}/events`)).body.events.length;
      return { status: e.status, run: e.run, attempt: e.attempt, events };
    };

    it("holds up to the lease's last millisecond, then refuses every report", async () => {
      const task = await leased("e-1");
      const ok = await t.call("POST", `/v1/worker/tasks/${task}/steps`, {
        worker_id: "w1",
        step: "a",
        seq: 1,
        result: 1,
        compensable: true,
      });
      expect(ok.status).toBe(200);
      t.clock.advance(LEASE_MS); // exactly at lease_until: still held (the reaper would not take it either)
      const hb = await t.call("POST", "/v1/worker/heartbeat", { worker_id: "w1", task_ids: [task] });
      expect(hb.body.tasks[task].lease).toBe("held");
      t.clock.advance(LEASE_MS + 1); // one ms past the renewed lease, no reaper
      const before = await state("e-1");
      expect(before.status).toBe("RUNNING");

      const again = await t.call("POST", "/v1/worker/heartbeat", { worker_id: "w1", task_ids: [task] });
      expect(again.body.tasks[task]).toEqual({ lease: "lost", cancel_requested: null });
      const reports: [string, object][] = [
        ["steps", { step: "b", seq: 2, result: 2, compensable: false }],
        ["complete", { result: { forged: true } }],
        ["fail", { error: { message: "x" }, retryable: false }],
        ["continue", { input: {} }],
        ["compensating", {}],
        ["compensations", { step: "a" }],
        ["cancelled", {}],
      ];
      for (const [report, body] of reports) {
        const r = await t.call("POST", `/v1/worker/tasks/${task}/${report}`, { worker_id: "w1", ...body });
        expect({ report, status: r.status, code: r.body?.code }).toEqual({ report, status: 409, code: "CONFLICT" });
        if (report === "complete") expect(r.body.message).toMatch(/the lease of worker w1 expired 1 ms ago/);
      }
      const batch = await t.call("POST", "/v1/worker/complete", {
        worker_id: "w1",
        tasks: [{ task_id: task, result: 1 }],
      });
      expect(batch.body.tasks[task].code).toBe("CONFLICT");
      const release = await t.call("POST", "/v1/worker/release", { worker_id: "w1", task_ids: [task] });
      expect(release.body.released).toEqual([]);
      expect(await state("e-1")).toEqual(before);
    });

    it("a report within the lease still works (the check is the lease's end, not the reaper)", async () => {
      const task = await leased("e-2");
      t.clock.advance(LEASE_MS - 1);
      const r = await t.call("POST", `/v1/worker/tasks/${task}/complete`, { worker_id: "w1", result: { ok: 1 } });
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("COMPLETED");
    });
  });
}
