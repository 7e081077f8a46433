/**
 * A trigger of a `cancel_previous` schedule and the end of its previous execution, at once, on
 * PostgreSQL (docs/storage.md § Locking). The end holds the execution and then wants the schedule
 * (its outcome); the trigger cancels that execution. Taking the schedule first, the trigger waited
 * for the execution while holding what the end wanted: a deadlock, found by PostgreSQL a second
 * later, the trigger answered 503. Found by a race run of two servers. SQLite runs one transaction
 * at a time, so it has no such order. Also: a fire waiting behind a table lock says so in the log
 * (it stalled in silence).
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { PG_URL, postgresDialect, type TestLocation } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

if (!postgresDialect.enabled) console.warn(`skipped: "lock order [postgres]": ${postgresDialect.skipReason}`);

describe.skipIf(!postgresDialect.enabled)("lock order [postgres]", () => {
  let location: TestLocation;
  let store: Store;
  let admin: pg.Client;

  beforeEach(async () => {
    location = await postgresDialect.createLocation();
    store = await location.open();
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });
  afterEach(async () => {
    await admin.end();
    await location.destroy();
  });

  /** Resolves once a backend of this test's schema waits for a row lock (an event, polled). */
  async function someoneWaitsForALock(): Promise<void> {
    const schema = location.env.ORBIT_TEST_PG_SCHEMA;
    for (;;) {
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity a
          WHERE a.wait_event_type = 'Lock' AND EXISTS (
            SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
              JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE l.pid = a.pid AND n.nspname = $1)`,
        [schema],
      );
      if (rows[0].n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it("says so while a fire waits behind a lock held on the schedules table, and fires once it goes", async () => {
    const warnings: string[] = [];
    const log = { warn: (_: object, msg: string) => void warnings.push(msg), error: () => undefined };
    const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", log, stallWarnMs: 50 });
    await h.scheduler.schedules.create({
      schedule_id: "held",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "1m",
    });
    const schema = location.env.ORBIT_TEST_PG_SCHEMA;
    await admin.query("BEGIN");
    await admin.query(`LOCK TABLE ${schema}.orbit_schedules IN ACCESS EXCLUSIVE MODE`);
    const fired = h.fireAt("2026-11-15T00:01:00Z");
    await someoneWaitsForALock();
    // Waits on events: the warning comes while the fire still waits.
    while (warnings.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings[0]).toMatch(/^a fire batch is still waiting for the database: a lock held on an Orbit table/);
    await admin.query("ROLLBACK");
    expect(await fired).toBe(1);
  });

  it("a trigger that cancels the previous execution while it ends: both commit, no deadlock", async () => {
    const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "cp",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "1m",
      overlap: "cancel_previous",
    });
    await h.fireAt("2026-11-15T00:01:00Z");
    const previous = "cp:2026-11-15T00:01:00Z";

    // The end's two locks, in its order: the execution, then (once the trigger waits) the schedule.
    const ending = store.transaction(async (tx) => {
      await tx.getExecution(previous, { forUpdate: true });
      await someoneWaitsForALock();
      await tx.lockScheduleCounters(["cp"]);
      return "ended";
    });
    const trigger = h.scheduler.actions.trigger("cp", {});

    const [ended, triggered] = await Promise.allSettled([ending, trigger]);
    expect(ended).toEqual({ status: "fulfilled", value: "ended" });
    expect(triggered.status).toBe("fulfilled");
    expect(triggered.status === "fulfilled" && triggered.value.started).toBe(true);
    const cancelled = await store.getExecution(previous);
    expect(cancelled?.cancelReason).toContain("overlap cancel_previous");
  });
});
