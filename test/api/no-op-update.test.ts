/**
 * An update that changes nothing (an empty PATCH, the values a schedule has) writes nothing: the
 * revision stays, so other clients' If-Match fences hold (it moved the revision and recomputed the
 * timing; a tester). On SQLite, and on PostgreSQL when ORBIT_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL } from "../helpers/db.js";
import { startDialectServer, type TestServer } from "./helpers.js";

const KINDS: Record<string, unknown>[] = [
  { cron: "0 3 * * *" },
  {
    cron: "30 9 * * 1-5",
    timezone: "Europe/Berlin",
    jitter: "5m",
    overlap: "buffer_one",
    catchup: "catch_up",
    max_catch_up: 3,
  },
  { interval: "15m", description: "Über", input: { a: [1, 2.5, "x"] }, max_runs: 10, labels: { team: "ops" } },
  { interval: "1h", paused: true, pause_note: "maintenance", start_at: "2030-01-01T00:00:00Z" },
];

for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`a no-op update (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startDialectServer(dialect, "orbit_noop");
      await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it("keeps the revision and the schedule for an empty patch and for its own values", async () => {
      for (const [i, kind] of KINDS.entries()) {
        const id = `k${i}`;
        const created = await t.call("POST", "/v1/schedules", { schedule_id: id, workflow: "W", ...kind });
        expect([id, created.status, created.body.message]).toEqual([id, 201, undefined]);
        for (const patch of [{}, { schedule_id: id }, kind]) {
          const r = await t.call("PATCH", `/v1/schedules/${id}`, patch);
          expect([id, patch, r.status, r.body.revision]).toEqual([id, patch, 200, created.body.revision]);
          expect(r.body).toEqual(created.body);
        }
        // A real change still moves it.
        const changed = await t.call("PATCH", `/v1/schedules/${id}`, { description: "changed" });
        expect(changed.body.revision).toBe(created.body.revision + 1);
      }
    });
  });
}
