/**
 * A retried scheduled execution takes its schedule's overlap slot (docs/outcomes.md § Retry): under
 * `overlap: skip` the next occurrence is skipped while the retry runs; it used to start beside it,
 * two RUNNING at once, because the fire looked only at the newer execution, which had ended. When a
 * newer execution still runs, the retry runs beside it (an explicit request) and leaves the slot.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

describeEachDialect("retry and the overlap slot", (dialect) => {
  const db = useStore(dialect);

  it("under skip, the next occurrence waits for a retried run", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "r",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "skip",
      input: ORDER_INPUT,
    });
    const first = "r:2026-11-15T00:01:00Z";
    await h.fireAt("2026-11-15T00:01:00.100Z");
    await h.executions.cancel(first);
    await h.fireAt("2026-11-15T00:02:00.100Z");
    await h.executions.complete("r:2026-11-15T00:02:00Z", {});

    expect((await h.executions.retry(first)).status).toBe("RUNNING");
    expect((await h.scheduler.schedules.get("r")).last_execution_id).toBe(first);
    await h.fireAt("2026-11-15T00:03:00.100Z");
    const skipped = h.reports.at(-1);
    expect(skipped).toMatchObject({ started: 0, skipped: { overlap: 1 } });
    expect(await db.store.getExecution("r:2026-11-15T00:03:00Z")).toBeNull();

    // It ended: the next one starts. A retry while that one runs leaves it the slot.
    await h.executions.complete(first, {});
    await h.fireAt("2026-11-15T00:04:00.100Z");
    const fourth = "r:2026-11-15T00:04:00Z";
    expect((await db.store.getExecution(fourth))?.status).toBe("RUNNING");
    await h.executions.complete(fourth, {});
    await h.fireAt("2026-11-15T00:05:00.100Z");
    const fifth = "r:2026-11-15T00:05:00Z";
    await h.executions.fail(fifth, { message: "boom" });
    await h.fireAt("2026-11-15T00:06:00.100Z");
    const sixth = "r:2026-11-15T00:06:00Z";
    expect((await db.store.getExecution(sixth))?.status).toBe("RUNNING");
    await h.executions.retry(fifth);
    expect((await h.scheduler.schedules.get("r")).last_execution_id).toBe(sixth);
  });
});
