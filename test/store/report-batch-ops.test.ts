/**
 * The set-based operations of the worker path on both dialects (src/store/sql/task-ops.ts): a poll's
 * candidates with their executions (listClaimable, passing over an execution another transaction
 * holds on PostgreSQL), and a batched complete's locks and writes (lockTasksAndExecutions,
 * completeExecutions, setTasksState, setSchedulesOutcomes), and a heartbeat's cancelReasonsOfTasks.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { execution, schedule, T0, task } from "./fixtures/records.js";

describeEachDialect("store operations of batched reports", (dialect) => {
  const db = useStore(dialect);
  const offer = { workflows: [{ name: "W", version: "1.0.0" }], availableAtOrBeforeMs: T0, limit: 10 };

  it("lists claimable tasks with their executions, oldest first, only the offered workflows", async () => {
    await db.store.insertExecution(execution("a", { input: { q: 'a "quoted" ünïcode' }, trigger: { type: "cron" } }));
    await db.store.insertExecution(execution("b"));
    await db.store.insertExecution(execution("c", { workflow: "Other" }));
    await db.store.transaction((tx) =>
      tx.insertTasks([
        task("t-b", "b", { availableMs: T0 - 10 }),
        task("t-a", "a"),
        task("t-c", "c", { workflow: "Other" }),
        task("t-late", "a", { run: 2, availableMs: T0 + 1 }),
      ]),
    );
    const step = { step: "s1", seq: 1, result: null, hasCompensation: false, compensatedMs: null, completedMs: T0 };
    await db.store.insertStepResult({ ...step, executionId: "a", run: 1 });
    await db.store.insertStepResult({ ...step, executionId: "b", run: 2 });
    const got = await db.store.transaction((tx) => tx.listClaimable({ ...offer, skipLocked: true }));
    expect(got.map((c) => c.task.taskId)).toEqual(["t-b", "t-a"]);
    // Steps of the task's own run only: b's are of another run.
    expect(got.map((c) => c.hasSteps)).toEqual([false, true]);
    expect(got[1]!.execution).toEqual(await db.store.getExecution("a"));
    expect(got[1]!.task).toMatchObject({ taskId: "t-a", executionId: "a", state: "pending", maxAttempts: 1 });
  });

  if (dialect.name === "postgres") {
    it("passes over a task whose execution another transaction holds, without waiting for it", async () => {
      for (const id of ["a", "b"]) await db.store.insertExecution(execution(id));
      await db.store.transaction((tx) => tx.insertTasks([task("t-a", "a"), task("t-b", "b")]));
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = (): void => undefined;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = db.store.transaction(async (tx) => {
        await tx.getExecution("a", { forUpdate: true });
        locked();
        await held;
      });
      await isLocked;
      const got = await db.store.transaction((tx) => tx.listClaimable({ ...offer, skipLocked: true }));
      release();
      await holder;
      expect(got.map((c) => c.task.taskId)).toEqual(["t-b"]);
    });
  }

  it("locks, completes and ends a batch: executions COMPLETED with their results, tasks done, outcomes written", async () => {
    await db.store.insertSchedule(schedule("s"));
    await db.store.insertExecution(execution("a", { error: { message: "timeout marker" }, cancelReason: "stop" }));
    await db.store.insertExecution(execution("b"));
    await db.store.transaction((tx) => tx.insertTasks([task("t-a", "a"), task("t-b", "b")]));
    const locked = await db.store.transaction((tx) => tx.lockTasksAndExecutions(["t-b", "t-a", "missing"]));
    expect(locked.executions.map((e) => e.executionId)).toEqual(["a", "b"]);
    expect(locked.tasks.map((t) => t.taskId)).toEqual(["t-a", "t-b"]);
    expect(await db.store.cancelReasonsOfTasks(["t-a", "t-b", "missing"])).toEqual(
      new Map([
        ["t-a", "stop"],
        ["t-b", null],
      ]),
    );
    const result = { text: 'a "quoted" \\ back\\slash', n: [1, null] };
    await db.store.transaction(async (tx) => {
      await tx.completeExecutions(
        [
          { executionId: "a", result },
          { executionId: "b", result: null },
        ],
        T0 + 5,
      );
      await tx.setTasksState(["t-a", "t-b"], "done");
      await tx.setSchedulesOutcomes([
        {
          scheduleId: "s",
          outcomes: {
            lastOutcome: { status: "COMPLETED", executionId: "b", endedMs: T0 + 5, error: null, errorType: null },
            lastSuccessMs: T0 + 5,
            lastFailureMs: T0 - 1,
            consecutiveFailures: 0,
            failures: 3,
          },
        },
      ]);
    });
    expect(await db.store.getExecution("a")).toEqual(
      execution("a", { status: "COMPLETED", result, error: null, endedMs: T0 + 5, cancelReason: "stop" }),
    );
    expect(await db.store.getExecution("b")).toMatchObject({ status: "COMPLETED", result: null, endedMs: T0 + 5 });
    expect((await db.store.getTaskLease("t-a"))?.state).toBe("done");
    expect((await db.store.getTaskLease("t-b"))?.state).toBe("done");
    expect((await db.store.getSchedule("s"))?.outcomes).toMatchObject({
      lastOutcome: { executionId: "b" },
      lastSuccessMs: T0 + 5,
      lastFailureMs: T0 - 1,
      failures: 3,
    });
  });
});
