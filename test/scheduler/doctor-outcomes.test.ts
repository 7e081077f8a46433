/**
 * `orbit doctor`'s warnings about what schedules start (src/scheduler/doctor-outcomes.ts), and the
 * workflows check of a workflow whose every version is deprecated, on both dialects with the
 * injected clock and no firing loop (a tester's report, h4).
 */
import { expect, it } from "vitest";
import { runDoctor } from "../../src/scheduler/doctor.js";
import { NO_OUTCOMES } from "../../src/store/rows.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

const ORDERS = { schedule_id: "orders", workflow: "OrderProcessing", interval: "10s", input: ORDER_INPUT };

describeEachDialect("orbit doctor: outcomes that need a human", (dialect) => {
  const db = useStore(dialect);

  async function setup() {
    const h = await makeHarness(db.store, { now: new Date(await db.store.databaseNow()).toISOString() });
    const check = async (name: string) => (await runDoctor(db.store, h.clock)).checks.find((c) => c.name === name);
    return { h, check };
  }

  it("names a schedule pause_on_failure paused first, ahead of five that failed more often", async () => {
    const { h, check } = await setup();
    await h.scheduler.schedules.create({ ...ORDERS, schedule_id: "pof", pause_on_failure: 2 });
    for (let run = 0; run < 2; run++) {
      h.clock.advance(10_000);
      await h.scheduler.loop.fireDue();
      const last = (await db.store.getSchedule("pof"))?.lastExecutionId;
      await h.executions.fail(String(last), { message: "card declined" });
    }
    expect((await db.store.getSchedule("pof"))?.paused).toBe(true);
    for (const id of ["a1", "a2", "a3", "a4", "a5", "a6"]) {
      await h.scheduler.schedules.create({ ...ORDERS, schedule_id: id });
      await db.store.setScheduleOutcomes(id, { ...NO_OUTCOMES, consecutiveFailures: 40, failures: 40 });
    }
    const c = await check("schedules");
    expect(c?.status).toBe("warn");
    // Sorted by failures alone, it sank past the five named into "and 2 more" (a tester).
    expect(c?.message).toContain(
      "7 schedule(s) whose last run failed: pof (FAILED, 2 in a row, paused by pause_on_failure), a1 (FAILED, 40 in a row), a2 (FAILED, 40 in a row), a3 (FAILED, 40 in a row), a4 (FAILED, 40 in a row) and 2 more",
    );
  });

  it("warns of a schedule whose last run was cancelled and its compensation failed", async () => {
    const { h, check } = await setup();
    await h.scheduler.schedules.create(ORDERS);
    const outcome = {
      status: "CANCELLED" as const,
      executionId: "orders:manual:x",
      endedMs: h.clock.now(),
      error: "user cancel; compensation failed: charge: refund API down",
      errorType: "CompensationFailed",
    };
    await db.store.setScheduleOutcomes("orders", { ...NO_OUTCOMES, lastOutcome: outcome });
    const c = await check("schedules");
    expect(c?.status).toBe("warn");
    expect(c?.message).toContain(
      "1 schedule(s) whose last run was cancelled and its compensation failed (not undone): orders",
    );
    expect(c?.hint).toContain("undo it by hand");
    // A clean cancel counts neither way.
    await db.store.setScheduleOutcomes("orders", {
      ...NO_OUTCOMES,
      lastOutcome: { ...outcome, error: "user cancel", errorType: null },
    });
    expect(await check("schedules")).toMatchObject({ status: "ok" });
  });

  it("warns of a cancel_previous schedule whose last 3 runs were each replaced, none completed", async () => {
    const { h, check } = await setup();
    await h.scheduler.schedules.create({ ...ORDERS, overlap: "cancel_previous" });
    const fire = async () => {
      h.clock.advance(10_000);
      await h.scheduler.loop.fireDue();
    };
    // Nothing takes the runs: each occurrence cancels the one before (ended at once, no worker held it).
    for (let i = 0; i < 3; i++) await fire();
    const ended = await db.store.listExecutions({ scheduleId: "orders", limit: 10 });
    expect(ended.map((e) => e.status)).toEqual(["RUNNING", "CANCELLED", "CANCELLED"]);
    // Two replaced: not yet.
    expect(await check("schedules")).toMatchObject({ status: "ok" });
    await fire();
    const c = await check("schedules");
    expect(c?.status).toBe("warn");
    expect(c?.message).toBe(
      "1 active, none overdue; 1 schedule(s) whose runs are each replaced by the next occurrence before they complete (overlap cancel_previous): orders (last 3 runs replaced, last ok never)",
    );
    expect(c?.hint).toContain("overlap skip or buffer_one");
    // The running one completes: the last ended run is no longer a replacement.
    const running = (await db.store.getSchedule("orders"))?.lastExecutionId;
    await h.executions.complete(String(running), null);
    expect(await check("schedules")).toMatchObject({ status: "ok" });
  });

  it("says a workflow whose every version is deprecated has no version that can start, not that it is unregistered", async () => {
    const { h, check } = await setup();
    await h.scheduler.schedules.create(ORDERS);
    await h.workflows.deprecate("OrderProcessing", "1.0.0", true);
    const c = await check("workflows");
    expect(c).toMatchObject({
      status: "fail",
      message:
        "active schedules name workflows with no version that can start: OrderProcessing (every version deprecated), 1 schedule: orders",
    });
    expect(c?.message).not.toContain("not registered");
    expect(c?.hint).toContain("orbit workflow undeprecate");
  });
});
