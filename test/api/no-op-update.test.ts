/**
 * An update that changes nothing (an empty PATCH, the values a schedule has) writes nothing: the
 * revision stays, so other clients' If-Match fences hold (it moved the revision and recomputed the
 * timing; a tester). On SQLite, and on PostgreSQL when ORBIT_TEST_DATABASE_URL is set.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

if (!PG_URL) console.warn("skipped: test/api/no-op-update.test.ts on PostgreSQL: ORBIT_TEST_DATABASE_URL is not set");

const dialects = [
  { name: "sqlite", enabled: true },
  { name: "postgres", enabled: PG_URL !== undefined },
];

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

describe.each(dialects)("a no-op update on $name", ({ name, enabled }) => {
  let t: TestServer;
  const schema = `orbit_noop_${randomBytes(5).toString("hex")}`;

  beforeAll(async () => {
    if (!enabled) return;
    if (name === "postgres") {
      await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({ database: PG_URL as string, databaseSchema: schema });
    } else t = await startTestServer();
    await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
  });
  afterAll(async () => {
    if (!enabled) return;
    await t.stop();
    if (name === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it.skipIf(!enabled)("keeps the revision and the schedule for an empty patch and for its own values", async () => {
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
