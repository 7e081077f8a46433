/**
 * The server's `orbit doctor` checks (src/scheduler/doctor.ts) on both dialects, on a real store
 * with the injected clock and no firing loop: clock skew against the database, overdue schedules
 * and schedules whose starts are refused, scheduled workflows that are not registered or that no
 * live worker polls, migrations.
 */
import { expect, it } from "vitest";
import { runDoctor } from "../../src/scheduler/doctor.js";
import { loadMigrations } from "../../src/store/migrations.js";
import { adminQuery, adminRows, describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

/** Every 10 s, OrderProcessing at its latest version. */
const ORDERS = { schedule_id: "orders", workflow: "OrderProcessing", interval: "10s", input: ORDER_INPUT };

describeEachDialect("orbit doctor checks", (dialect) => {
  const db = useStore(dialect);

  async function setup() {
    // The harness's clock starts at the database's now, so the skew is only the round trip.
    const h = await makeHarness(db.store, { now: new Date(await db.store.databaseNow()).toISOString() });
    const byName = async () => Object.fromEntries((await runDoctor(db.store, h.clock)).checks.map((c) => [c.name, c]));
    return { h, byName };
  }

  it("passes on a fresh store: writable, migrations current, clocks agree, nothing scheduled", async () => {
    const { byName } = await setup();
    const c = await byName();
    expect(Object.keys(c)).toEqual(["database", "migrations", "clock", "workflows", "workers", "schedules"]);
    // A PostgreSQL server with autovacuum off (this machine's CI configuration) is worth a warning.
    const vacuumOff = dialect.name === "postgres" && (await autovacuum(db.location.env)) === "off";
    for (const check of Object.values(c)) {
      expect(check).toMatchObject({ status: check.name === "database" && vacuumOff ? "warn" : "ok" });
    }
    if (vacuumOff) expect(c.database?.message).toMatch(/; autovacuum is off for this PostgreSQL server: /);
    // Like every time of the API: milliseconds only when they are not zero (it said `.000Z`).
    const { h } = await setup();
    h.clock.set(Date.UTC(2026, 11, 4, 22, 27, 23));
    expect((await runDoctor(db.store, h.clock)).server_time).toBe("2026-12-04T22:27:23Z");
    const newest = loadMigrations(dialect.name).at(-1);
    expect(c.migrations?.message).toBe(
      `current: ${newest?.version} applied, newest ${String(newest?.version).padStart(4, "0")}_${newest?.name}`,
    );
  });

  it("warns on a database a newer Orbit migrated, naming both migrations alike", async () => {
    const { h } = await setup();
    const known = loadMigrations(dialect.name);
    const next = (known.at(-1)?.version ?? 0) + 1;
    const newer = Object.create(db.store, {
      appliedMigrations: { value: async () => [...(await db.store.appliedMigrations()), next] },
    });
    const c = (await runDoctor(newer, h.clock)).checks.find((k) => k.name === "migrations");
    const pad = (v: number) => String(v).padStart(4, "0");
    expect(c).toMatchObject({
      status: "warn",
      message: `the database has migration ${pad(next)}; this server knows up to ${pad(next - 1)}_${known.at(-1)?.name}: a newer Orbit migrated it`,
    });
  });

  it.runIf(dialect.name === "postgres")(
    "warns when autovacuum is off for one of Orbit's tables (their dead rows would pile up)",
    async () => {
      const { byName } = await setup();
      const { ORBIT_TEST_PG_SCHEMA: schema, ORBIT_TEST_PG_URL: url } = db.location.env;
      // Said for the server when it is off there (this machine's CI configuration), else per table.
      const where =
        (await autovacuum(db.location.env)) === "off" ? "this PostgreSQL server" : "orbit_executions, orbit_schedules";
      await adminQuery(`ALTER TABLE ${schema}.orbit_executions SET (autovacuum_enabled = false)`, url);
      await adminQuery(`ALTER TABLE ${schema}.orbit_schedules SET (autovacuum_enabled = false)`, url);
      const c = (await byName()).database;
      expect(c).toMatchObject({ status: "warn", hint: expect.stringContaining("turn autovacuum on") });
      expect(c?.message).toMatch(/^postgres: a write \(rolled back\) took \d+ ms; autovacuum is off for /);
      expect(c?.message).toContain(
        `autovacuum is off for ${where}: the dead rows of every fire and report are never cleared, so the tables and the fire lag grow`,
      );
    },
  );

  it("fails the database check when writes have failed since (a full disk), though a rolled-back write works", async () => {
    const { h } = await setup();
    // A rolled-back write never reaches SQLite's file: the store's record of failed writes is what tells.
    const full = new Proxy(db.store, {
      get(target, prop) {
        if (prop === "writeProblem") return async () => "SQLITE_FULL: database or disk is full";
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const c = (await runDoctor(full, h.clock)).checks.find((x) => x.name === "database");
    expect(c).toMatchObject({
      status: "fail",
      message: `a write to the ${dialect.name} database failed: SQLITE_FULL: database or disk is full`,
    });
    expect(c?.hint).toMatch(/disk/);
  });

  it("fails the clock check when this server's clock is off the database's", async () => {
    const { h, byName } = await setup();
    h.clock.advance(5_000);
    expect((await byName()).clock).toMatchObject({
      status: "warn",
      message: expect.stringMatching(/ahead of the database's/),
    });
    h.clock.advance(-65_000);
    const c = (await byName()).clock;
    expect(c?.status).toBe("fail");
    expect(c?.message).toMatch(/^this server's clock is 6\d\d\d\d ms behind the database's$/);
    expect(c?.hint).toMatch(/NTP/);
  });

  it("fails workers when no live worker polls a scheduled workflow, and schedules when one is overdue", async () => {
    const { h, byName } = await setup();
    await h.scheduler.schedules.create(ORDERS);
    let c = await byName();
    expect(c.workflows?.status).toBe("ok");
    expect(c.workers).toMatchObject({
      status: "fail",
      message: "no live worker (seen in the last 60 s) polls: OrderProcessing@1.0.0 (latest), 1 schedule: orders",
    });
    expect(c.schedules).toMatchObject({ status: "ok", message: "1 active, none overdue" });
    // A schedule pinned to the version "latest" is: one line for the version, not two.
    await h.scheduler.schedules.create({ ...ORDERS, schedule_id: "pinned", version: "1.0.0" });
    expect((await byName()).workers?.message).toBe(
      "no live worker (seen in the last 60 s) polls: OrderProcessing@1.0.0 (latest, and pinned), 2 schedules: orders, pinned",
    );
    await h.scheduler.schedules.delete("pinned");
    // "Latest" skips a deprecated version, as the fire does.
    await h.workflows.register({ name: "OrderProcessing", version: "2.0.0" });
    await h.workflows.deprecate("OrderProcessing", "2.0.0", true);
    expect((await byName()).workers?.message).toBe(
      "no live worker (seen in the last 60 s) polls: OrderProcessing@1.0.0 (latest), 1 schedule: orders",
    );

    // A caller who may not schedule OrderProcessing is told nothing of its schedules.
    const hidden = await runDoctor(db.store, h.clock, (w) => w !== "OrderProcessing");
    expect(JSON.stringify(hidden)).not.toContain("orders");
    expect(hidden.checks.find((x) => x.name === "workers")?.status).toBe("ok");
    // … but told that some were left out: it read "0 active schedules … ok" as all there was (a tester).
    expect(hidden.checks.find((x) => x.name === "workflows")?.message).toBe(
      "every workflow of the 0 active schedules is registered (1 schedule(s) of workflows this identity may not schedule are not checked)",
    );

    await db.store.upsertWorker("w-1", [{ name: "OrderProcessing", version: "1.0.0" }], h.clock.now());
    expect((await byName()).workers).toMatchObject({
      status: "ok",
      message: "1 live worker(s); every scheduled workflow (1) is polled",
    });
    // A stuck worker (no free slot, yet no task held) polls but takes nothing: its workflow runs
    // nothing, and a stuck worker beside a free one is a warning.
    const stuckOnes = (ids: string[]) => async (live: readonly { workerId: string }[]) =>
      live.filter((w) => ids.includes(w.workerId)) as never;
    const onlyStuck = await runDoctor(db.store, h.clock, undefined, undefined, undefined, stuckOnes(["w-1"]));
    expect(onlyStuck.checks.find((x) => x.name === "workers")).toEqual({
      name: "workers",
      status: "fail",
      message:
        "only stuck workers poll: OrderProcessing@1.0.0 (latest), 1 schedule: orders; stuck (no free slot, yet no task held: code of runs that has not returned keeps the slots): w-1",
      hint: "restart the stuck workers (their log names the runs that did not return)",
    });
    await db.store.upsertWorker("w-2", [{ name: "OrderProcessing", version: "1.0.0" }], h.clock.now());
    const beside = await runDoctor(db.store, h.clock, undefined, undefined, undefined, stuckOnes(["w-1"]));
    expect(beside.checks.find((x) => x.name === "workers")).toMatchObject({
      status: "warn",
      message:
        "2 live worker(s); every scheduled workflow (1) is polled; stuck (no free slot, yet no task held: code of runs that has not returned keeps the slots): w-1",
    });
    await db.store.markWorkerLeft("w-2", h.clock.now());
    // Nor how many workers run it: GET /v1/workers lists it none of them (a tester).
    const stranger = await runDoctor(db.store, h.clock, (w) => w !== "OrderProcessing");
    expect(stranger.checks.find((x) => x.name === "workers")?.message).toBe(
      "0 live worker(s); every scheduled workflow (0) is polled",
    );

    // No loop fires here: five minutes on, the schedule is overdue (and the worker no longer live).
    // It was due up to 10 s after the clock's start (real time), so 290-300 s late, rounded.
    h.clock.advance(300_000);
    c = await byName();
    expect(c.schedules?.status).toBe("fail");
    expect(c.schedules?.message).toMatch(
      /^1 schedule\(s\) overdue \(due over 60 s ago and not fired\): orders; the oldest is (29\d|300) s late$/,
    );
    expect(c.workers?.status).toBe("fail");
    expect(c.schedules?.hint).toContain("orbit_schedule_fire_lag_seconds");
    // With --cluster shared occurrences come due by the database's clock, as orbit_schedules_overdue
    // judges: a server clock ahead of it made doctor call the schedule overdue when it was not.
    const dueBy = (ms: number) => async () => ms;
    const shared = await runDoctor(db.store, h.clock, undefined, dueBy(h.clock.now() - 300_000));
    expect(shared.checks.find((x) => x.name === "schedules")?.message).toBe("1 active, none overdue");
    // Overdue past the server's misfire grace, as the metric: with a 5 s grace, 10-20 s late is
    // overdue (doctor said "none overdue" while orbit_schedules_overdue counted it).
    const at = dueBy(h.clock.now() - 280_000);
    expect((await runDoctor(db.store, h.clock, undefined, at)).checks.find((x) => x.name === "schedules")?.status).toBe(
      "ok",
    );
    const graced = await runDoctor(db.store, h.clock, undefined, at, 5_000);
    expect(graced.checks.find((x) => x.name === "schedules")?.message).toMatch(
      /^1 schedule\(s\) overdue \(due over 5 s ago and not fired\): orders/,
    );
  });

  it("fails schedules when one's occurrences cannot start (its input refused by the latest version)", async () => {
    const { h, byName } = await setup();
    await h.scheduler.schedules.create(ORDERS);
    expect((await byName()).schedules?.status).toBe("ok");
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["region"] },
    });
    h.clock.advance(10_000);
    await h.scheduler.loop.fireDue();
    const refusal = (await db.store.getSchedule("orders"))?.lastError;
    expect(refusal).toMatch(/region/);
    const c = (await byName()).schedules;
    expect(c).toMatchObject({
      status: "fail",
      message: `1 schedule(s) cannot start their occurrences: orders (orders: ${refusal})`,
    });
    expect(c?.hint).toMatch(/orbit schedule get <id>/);
  });

  it("warns in schedules when a clock that ran ahead left a schedule fired at an instant still to come", async () => {
    // A +1 h step and its correction: the schedules fired an hour ahead stayed silent for that hour
    // while doctor said "ok … none overdue" (a tester).
    const dbNow = await db.store.databaseNow();
    const h = await makeHarness(db.store, { now: new Date(dbNow + 3_600_000).toISOString() });
    await h.scheduler.schedules.create(ORDERS);
    h.clock.advance(10_000);
    await h.scheduler.loop.fireDue();
    expect((await db.store.getSchedule("orders"))?.fired).toBe(1);
    const check = async () => (await runDoctor(db.store, h.clock)).checks.find((c) => c.name === "schedules");
    expect(await check()).toMatchObject({ status: "ok" });
    h.clock.set(await db.store.databaseNow()); // the correction
    const c = await check();
    expect(c?.status).toBe("warn");
    expect(c?.message).toMatch(
      /^1 active, none overdue; 1 schedule\(s\) last fired ahead of this clock, by up to 36\d\d s \(the clock stepped back after they fired\): orders; they fire again only once this clock passes their last fire$/,
    );
    expect(c?.hint).toMatch(/time synchronisation/);
  });

  it("warns in schedules when a schedule's last runs failed, naming one pause_on_failure paused", async () => {
    // It said "ok … none overdue" while three schedules failed every run (a tester).
    const { h, byName } = await setup();
    await h.scheduler.schedules.create({ ...ORDERS, pause_on_failure: 2 });
    for (let run = 0; run < 2; run++) {
      h.clock.advance(10_000);
      await h.scheduler.loop.fireDue();
      const last = (await db.store.getSchedule("orders"))?.lastExecutionId;
      await h.executions.fail(String(last), { message: "card declined" });
    }
    expect((await db.store.getSchedule("orders"))?.paused).toBe(true);
    const c = (await byName()).schedules;
    expect(c).toMatchObject({
      status: "warn",
      message:
        "0 active, none overdue; 1 schedule(s) whose last run failed: orders (FAILED, 2 in a row, paused by pause_on_failure)",
    });
    expect(c?.hint).toContain("orbit schedule resume <id>");
  });

  it("fails workflows when an active schedule names an unregistered one", async () => {
    const { h, byName } = await setup();
    const row = await h.scheduler.schedules.create(ORDERS);
    expect(row.schedule_id).toBe("orders");
    // Re-point it at a name nobody registered, behind the API's back (as a restore of an old backup might).
    const stored = await db.store.getSchedule("orders");
    if (stored === null) throw new Error("no schedule");
    await db.store.updateSchedule(
      { ...stored, workflow: "Missing", spec: { ...stored.spec, workflow: "Missing" } },
      { expectedRevision: stored.revision },
    );
    const c = await byName();
    expect(c.workflows).toMatchObject({
      status: "fail",
      message: "active schedules name workflows that are not registered: Missing, 1 schedule: orders",
    });
  });
});

/** The PostgreSQL server's `autovacuum` setting. */
async function autovacuum(env: Record<string, string>): Promise<string> {
  const [row] = await adminRows<{ autovacuum: string }>("SHOW autovacuum", [], env.ORBIT_TEST_PG_URL);
  return row?.autovacuum ?? "";
}
