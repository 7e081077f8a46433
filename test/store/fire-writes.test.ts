/**
 * The store operations a fire batch writes and reads with (docs/benchmarks.md § Firing, "Issue 15:
 * the CPU of a fire"): `WorkflowCreated` built from the execution rows (insertCreatedEvents), the
 * ledger prunes of a batch in one call (pruneOccurrencesOf), and the due read that carries each
 * schedule's last execution status (listDueSchedules). Both dialects.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { execution, schedule, T0 } from "./fixtures/records.js";

describeEachDialect("store writes of a fire batch", (dialect) => {
  const db = useStore(dialect);

  it("writes each execution's WorkflowCreated from its own fields, schedule_id and trigger only when set", async () => {
    const input = { text: 'a "quoted" \\ back\\slash, ünïcode', n: [1, 2.5, null], big: 12345678901234, nested: {} };
    const trigger = { type: "cron", schedule_id: "s", scheduled_for: "2026-11-15T18:51:00Z", attempt: 1 };
    const fired = execution("s:1", { input, scheduleId: "s", trigger, createdMs: T0 + 7, startedMs: T0 + 7 });
    const plain = execution("plain", { version: "2.0.0" });
    const triggered = execution("triggered", { trigger: { type: "manual" } });
    await db.store.transaction(async (tx) => {
      await tx.insertExecutions([fired, plain, triggered]);
      await tx.insertCreatedEvents([fired, plain, triggered]);
    });
    expect(await db.store.listEvents("s:1")).toEqual([
      {
        executionId: "s:1",
        seq: 1,
        type: "WorkflowCreated",
        data: { workflow: "W", version: "1.0.0", input, schedule_id: "s", trigger },
        atMs: T0 + 7,
      },
    ]);
    expect((await db.store.listEvents("plain"))[0]?.data).toEqual({
      workflow: "W",
      version: "2.0.0",
      input: { id: "plain" },
    });
    expect((await db.store.listEvents("triggered"))[0]?.data).toEqual({
      workflow: "W",
      version: "1.0.0",
      input: { id: "triggered" },
      trigger: { type: "manual" },
    });
    expect((await db.store.appendEvent("plain", "Next", {}, T0)).seq).toBe(2);
    // A first event that exists fails the statement (the caller's transaction rolls back).
    await expect(db.store.transaction((tx) => tx.insertCreatedEvents([plain]))).rejects.toThrow();
    await db.store.transaction((tx) => tx.insertCreatedEvents([]));
  });

  it("prunes the ledgers of several schedules at once, each to its newest rows", async () => {
    for (const [id, n] of [
      ["a", 5],
      ["b", 2],
      ["c", 4],
    ] as const) {
      for (let i = 0; i < n; i++) {
        await db.store.appendOccurrence({ scheduleId: id, kind: "started", occurrenceMs: T0 + i, recordedMs: T0 });
      }
    }
    expect(await db.store.transaction((tx) => tx.pruneOccurrencesOf(["a", "b", "missing"], 2))).toBe(3);
    const kept = async (id: string) =>
      (await db.store.listOccurrences(id, { limit: 10 })).map((o) => (o.occurrenceMs as number) - T0);
    expect(await kept("a")).toEqual([4, 3]);
    expect(await kept("b")).toEqual([1, 0]);
    expect(await kept("c")).toEqual([3, 2, 1, 0]);
    expect(await db.store.transaction((tx) => tx.pruneOccurrencesOf([], 2))).toBe(0);
  });

  it("reads each due schedule with its last execution's status", async () => {
    await db.store.insertExecution(execution("running"));
    await db.store.insertExecution(execution("done", { status: "COMPLETED", endedMs: T0 }));
    await db.store.insertSchedule(schedule("d-running", { dueMs: T0, lastExecutionId: "running" }));
    await db.store.insertSchedule(schedule("c-done", { dueMs: T0, lastExecutionId: "done" }));
    await db.store.insertSchedule(schedule("b-gone", { dueMs: T0, lastExecutionId: "pruned" }));
    await db.store.insertSchedule(schedule("a-never", { dueMs: T0 }));
    const due = await db.store.transaction((tx) =>
      tx.listDueSchedules({ dueAtOrBeforeMs: T0, limit: 10, skipLocked: true }),
    );
    expect(due.map((r) => [r.scheduleId, r.lastStatus])).toEqual([
      ["a-never", null],
      ["b-gone", null],
      ["c-done", "COMPLETED"],
      ["d-running", "RUNNING"],
    ]);
    // The row itself is the schedule's, without its outcome columns (a fire neither reads nor writes them).
    expect({ ...due[3], lastStatus: undefined }).toEqual({
      ...schedule("d-running", { dueMs: T0, lastExecutionId: "running" }),
      outcomes: undefined,
    });
  });
});
