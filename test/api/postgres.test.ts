/** The API on PostgreSQL: one server in single mode, and two in active-standby (one leader). */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { SEED_SCHEDULE, startTestServer } from "./helpers.js";

if (!PG_URL) console.warn("skipped: test/api/postgres.test.ts: ORBIT_TEST_DATABASE_URL is not set");

describe.skipIf(!PG_URL)("the API on PostgreSQL", () => {
  const schema = `orbit_api_${randomBytes(5).toString("hex")}`;
  beforeAll(() => adminQuery(`CREATE SCHEMA ${schema}`));
  afterAll(() => adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));

  it("creates, fences, replays and fires like on SQLite", async () => {
    const t = await startTestServer({ database: PG_URL!, databaseSchema: schema });
    try {
      await t.registerOrders();
      const created = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, { "idempotency-key": "pg-1" });
      expect(created.status).toBe(201);
      expect(created.body.next_fire_at).toBe("2026-11-15T18:51:10Z");
      // The replay comes back in the same field order although PostgreSQL stores JSONB.
      const replay = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, { "idempotency-key": "pg-1" });
      expect(replay.text).toBe(created.text);
      expect(
        (await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: "1m" }, { "if-match": '"9"' })).status,
      ).toBe(412);
      t.clock.set(Date.parse("2026-11-15T18:51:10Z"));
      await t.until(
        async () => (await t.call("GET", "/v1/schedules/orders-every-10s")).body.fired,
        (n) => n === 1,
        "a fire",
      );
      expect((await t.call("GET", "/metrics")).text).toMatch(/^orbit_executions\{status="RUNNING"\} 1$/m);
      expect((await t.call("GET", "/readyz")).body).toEqual({ status: "ready", role: "single" });
    } finally {
      await t.stop();
    }
  });

  it("active-standby: one server leads, the other stands by, and takes over when the leader stops", async () => {
    const options = { database: PG_URL!, databaseSchema: schema, cluster: "active-standby" as const };
    const a = await startTestServer(options);
    const b = await startTestServer(options);
    try {
      expect((await a.call("GET", "/readyz")).body).toEqual({ status: "ready", role: "leader" });
      expect((await b.call("GET", "/readyz")).body).toEqual({ status: "ready", role: "standby" });
      await a.stop();
      await b.until(
        async () => (await b.call("GET", "/readyz")).body.role,
        (r) => r === "leader",
        "the takeover",
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
