/**
 * Worker identities on a server with `--config` (docs/security.md § Identities), both dialects:
 * a lease is bound to the identity that took it, so another identity allowed the same workflow
 * cannot report on it even under the same worker_id (403, nothing changes); and `GET /v1/workers`
 * shows each caller only the workers of workflows it may read, with only those workflows and
 * their tasks.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

const sha = (token: string) => createHash("sha256").update(token).digest("hex");
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const offer = (...names: string[]) =>
  names.map((name) => ({ name, version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }));
const worker = (name: string, globs: string) =>
  `  - name: ${name}\n    token_sha256: ${sha(name)}\n    kind: worker\n    allow:\n      - workflows: "${globs}"\n`;
const client = (name: string, globs: string, actions: string) =>
  `  - name: ${name}\n    token_sha256: ${sha(name)}\n    kind: client\n    allow:\n      - workflows: "${globs}"\n        actions: [${actions}]\n`;

const schema = `orbit_leaseid_${randomBytes(5).toString("hex")}`;
for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`identities and leases (${dialect})`, () => {
    let t: TestServer;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "orbit-leaseid-"));
      const config = join(dir, "identities.yaml");
      writeFileSync(
        config,
        `identities:\n${client("admin", "*", "schedule, start, read, cancel")}${client("order-reader", "Order*", "read")}${worker("team-a", "Order*")}${worker("team-b", "Order*")}${worker("billing", "Billing")}${worker("everything", "*")}`,
      );
      if (dialect === "postgres") await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({
        config,
        ...(dialect === "postgres" ? { database: PG_URL!, databaseSchema: schema } : {}),
        worker: { reaper: false, pollTimeoutMs: 0 },
      });
      for (const name of ["OrderProcessing", "Billing"]) {
        expect((await t.call("POST", "/v1/workflows", { name, version: "1.0.0" }, as("admin"))).status).toBe(201);
      }
    });
    afterAll(async () => {
      await t.stop();
      rmSync(dir, { recursive: true, force: true });
      if (dialect === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    });

    const start = async (id: string, workflow: string) =>
      expect(
        (await t.call("POST", "/v1/executions", { execution_id: id, workflow, input: {} }, as("admin"))).status,
      ).toBe(201);
    const poll = async (identity: string, workerId: string, ...workflows: string[]) => {
      const r = await t.call(
        "POST",
        "/v1/worker/poll",
        { worker_id: workerId, workflows: offer(...workflows), max_tasks: 10, wait_ms: 0 },
        as(identity),
      );
      expect(r.status).toBe(200);
      return r.body.tasks as { task_id: string; execution_id: string; workflow: string }[];
    };
    const state = async (id: string) => {
      const e = (await t.call("GET", `/v1/executions/${id}`, undefined, as("admin"))).body;
      const events = (await t.call("GET", `/v1/executions/${id}/events`, undefined, as("admin"))).body.events;
      return { status: e.status, result: e.result, attempt: e.attempt, events };
    };

    it("refuses every report on a lease another identity took, even under the same worker_id", async () => {
      await start("o-1", "OrderProcessing");
      const [task] = await poll("team-a", "w1", "OrderProcessing");
      expect(task?.execution_id).toBe("o-1");
      const id = task!.task_id;
      // A cancel request, so that the compensation reports are valid requests too.
      await t.call("POST", "/v1/executions/o-1/cancel", { reason: "test" }, as("admin"));
      const before = await state("o-1");

      const reports: [string, object][] = [
        ["/v1/worker/heartbeat", { task_ids: [id] }],
        ["/v1/worker/release", { task_ids: [id] }],
        ["/v1/worker/complete", { tasks: [{ task_id: id, result: { forged: true } }] }],
        [`/v1/worker/tasks/${id}/steps`, { step: "s", seq: 1, result: 1, compensable: false }],
        [`/v1/worker/tasks/${id}/complete`, { result: { forged: true } }],
        [`/v1/worker/tasks/${id}/fail`, { error: { message: "x" }, retryable: false }],
        [`/v1/worker/tasks/${id}/continue`, { input: {} }],
        [`/v1/worker/tasks/${id}/compensating`, {}],
        [`/v1/worker/tasks/${id}/compensations`, { step: "s" }],
        [`/v1/worker/tasks/${id}/cancelled`, {}],
      ];
      for (const [path, body] of reports) {
        const r = await t.call("POST", path, { worker_id: "w1", ...body }, as("team-b"));
        expect({ path, status: r.status, code: r.body?.code, message: r.body?.message }).toEqual({
          path,
          status: 403,
          code: "PERMISSION_DENIED",
          message: `worker task ${id} is leased by another identity: identity team-b may report only on leases it took`,
        });
      }
      expect(await state("o-1")).toEqual(before);

      // The identity that took it still holds it and may report.
      const hb = await t.call("POST", "/v1/worker/heartbeat", { worker_id: "w1", task_ids: [id] }, as("team-a"));
      expect(hb.body.tasks[id].lease).toBe("held");
      const done = await t.call("POST", `/v1/worker/tasks/${id}/cancelled`, { worker_id: "w1" }, as("team-a"));
      expect(done.status).toBe(200);
      expect(done.body.status).toBe("CANCELLED");
    });

    it("a lease handed back is free again: the next identity to take it is the one that may report", async () => {
      await start("o-2", "OrderProcessing");
      const [task] = await poll("team-a", "w1", "OrderProcessing");
      const released = await t.call(
        "POST",
        "/v1/worker/release",
        { worker_id: "w1", task_ids: [task!.task_id] },
        as("team-a"),
      );
      expect(released.body.released).toEqual([task!.task_id]);
      const [again] = await poll("team-b", "w1", "OrderProcessing");
      expect(again?.task_id).toBe(task!.task_id);
      const stale = await t.call(
        "POST",
        `/v1/worker/tasks/${task!.task_id}/complete`,
        { worker_id: "w1", result: 1 },
        as("team-a"),
      );
      expect(stale.status).toBe(403);
      const done = await t.call(
        "POST",
        `/v1/worker/tasks/${task!.task_id}/complete`,
        { worker_id: "w1", result: 2 },
        as("team-b"),
      );
      expect(done.body).toMatchObject({ status: "COMPLETED", result: 2 });
    });

    it("GET /v1/workers shows only the workers of workflows the caller may read, and only those workflows and tasks", async () => {
      await start("b-1", "Billing");
      expect(await poll("billing", "wb", "Billing")).toHaveLength(1);
      await start("b-2", "Billing");
      await start("o-3", "OrderProcessing");
      const both = await poll("everything", "wm", "OrderProcessing", "Billing");
      expect(both.map((x) => x.workflow).sort()).toEqual(["Billing", "OrderProcessing"]);
      await start("o-4", "OrderProcessing");
      expect(await poll("team-a", "wo", "OrderProcessing")).toHaveLength(1);

      const seen = async (token: string) =>
        Object.fromEntries(
          (
            (await t.call("GET", "/v1/workers", undefined, as(token))).body.workers as {
              worker_id: string;
              workflows: { name: string }[];
              running_tasks: number;
              free_slots: number | null;
            }[]
          ).map((w) => [
            w.worker_id,
            { workflows: w.workflows.map((f) => f.name), running: w.running_tasks, free: w.free_slots },
          ]),
        );
      const admin = await seen("admin");
      // Free slots count every task the worker holds: shown only to a caller who sees all it runs.
      expect(admin.wb).toEqual({ workflows: ["Billing"], running: 1, free: 10 });
      expect(admin.wm).toEqual({ workflows: ["OrderProcessing", "Billing"], running: 2, free: 10 });
      expect(admin.wo).toBeDefined();
      for (const token of ["order-reader", "team-a"]) {
        const shown = await seen(token);
        expect({ token, wb: shown.wb }).toEqual({ token, wb: undefined });
        expect({ token, wm: shown.wm }).toEqual({
          token,
          wm: { workflows: ["OrderProcessing"], running: 1, free: null },
        });
        expect(shown.wo).toBeDefined();
      }
      const billing = await seen("billing");
      expect(Object.keys(billing).sort()).toEqual(["wb", "wm"]);
      expect(billing.wm).toEqual({ workflows: ["Billing"], running: 1, free: null });
    });
  });
}
