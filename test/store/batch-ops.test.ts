/**
 * The batched operations of a fire batch (insertExecutions, insertCreatedEvents, insertTasks,
 * getExecutionStatuses, advanceSchedules, appendOccurrences) and of a poll (leaseTasks,
 * lockExecutionsIfFree, appendEvents, listStepResultsOf), and of a batch create or apply
 * (insertSchedules, getSchedules): the same rows as their one-row counterparts, on both dialects.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { execution, schedule, T0, task } from "./fixtures/records.js";

describeEachDialect("store batched fire operations", (dialect) => {
  const db = useStore(dialect);

  it("inserts executions, first events and tasks in one go, skipping ids that exist", async () => {
    await db.store.insertExecution(execution("old"));
    const quote = { text: 'a "quoted" \\ back\\slash, {braces}, ünïcode', n: [1, 2.5, null] };
    const batch = [
      execution("a", { input: quote, trigger: { type: "cron", schedule_id: "s" }, scheduleId: "s" }),
      execution("old"),
      execution("b", { concurrencyKey: "k" }),
    ];
    const inserted = await db.store.transaction((tx) => tx.insertExecutions(batch));
    expect(inserted.sort()).toEqual(["a", "b"]);
    expect(await db.store.getExecution("a")).toEqual(batch[0]);
    expect(await db.store.getExecution("b")).toEqual(batch[2]);
    expect(await db.store.transaction((tx) => tx.insertExecutions([]))).toEqual([]);

    await db.store.transaction(async (tx) => {
      await tx.insertCreatedEvents([batch[0]!, batch[2]!]);
      await tx.insertTasks([task("t-a", "a"), task("t-b", "b")]);
    });
    expect((await db.store.listEvents("a")).map((e) => [e.seq, e.type, e.data.input])).toEqual([
      [1, "WorkflowCreated", quote],
    ]);
    expect((await db.store.appendEvent("a", "Next", {}, T0)).seq).toBe(2);
    expect((await db.store.listEvents("a")).map((e) => e.seq)).toEqual([1, 2]);
    expect(await db.store.getTaskForExecution("b")).toEqual(task("t-b", "b"));
    // A first event that exists fails the statement (the caller's transaction rolls back).
    await expect(db.store.transaction((tx) => tx.insertCreatedEvents([batch[0]!]))).rejects.toThrow();

    const statuses = await db.store.getExecutionStatuses(["a", "missing", "old"]);
    expect(statuses).toEqual(
      new Map([
        ["a", "RUNNING"],
        ["old", "RUNNING"],
      ]),
    );
    expect((await db.store.getExecutionStatuses([])).size).toBe(0);
    // The ledger's started rows name a failed run's error type (Timeout: the pictures' TIMED OUT).
    expect((await db.store.getExecutionErrorTypes(["a", "old", "missing"])).size).toBe(0);
    await db.store.updateExecution("a", { status: "FAILED", error: { type: "Timeout", message: "run_timeout 1m" } });
    await db.store.updateExecution("old", { status: "FAILED", error: { message: "no type" } });
    expect(await db.store.getExecutionErrorTypes(["a", "old", "missing"])).toEqual(new Map([["a", "Timeout"]]));
  });

  it("inserts schedules in one go, every column as insertSchedule writes it, skipping ids that exist", async () => {
    await db.store.insertSchedule(schedule("old", { workflow: "Kept" }));
    const quote = { text: 'a "quoted" \\ back\\slash, {braces}, ünïcode', n: [1, 2.5, null] };
    const rows = [
      schedule("b", { input: quote, spec: { cron: "* * * * *", input: quote }, buffered: [T0, T0 + 1] }),
      schedule("old"),
      schedule("a", {
        version: "1.2.3",
        paused: true,
        pauseNote: "note",
        state: "paused",
        dueMs: null,
        nextFireMs: null,
        lastError: "waiting",
        concurrencyKey: "k",
      }),
    ];
    const inserted = await db.store.transaction((tx) => tx.insertSchedules(rows));
    expect(inserted).toEqual(["b", "a"]);
    expect(await db.store.getSchedule("b")).toEqual(rows[0]);
    expect(await db.store.getSchedule("a")).toEqual(rows[2]);
    expect((await db.store.getSchedule("old"))?.workflow).toBe("Kept");
    expect(await db.store.transaction((tx) => tx.insertSchedules([]))).toEqual([]);

    // getSchedules: those that exist among the ids, by id, locked when asked.
    const got = await db.store.transaction((tx) => tx.getSchedules(["old", "missing", "a", "b"], { forUpdate: true }));
    expect(got.map((r) => r.scheduleId)).toEqual(["a", "b", "old"]);
    expect(got[0]).toEqual(rows[2]);
    expect(await db.store.getSchedules([])).toEqual([]);
  });

  it("answers each inserted id once, in the rows' order, when a batch names an id twice or one that exists", async () => {
    await db.store.insertSchedule(schedule("there"));
    const ids = await db.store.transaction((tx) =>
      tx.insertSchedules([schedule("z"), schedule("there"), schedule("a"), schedule("z")]),
    );
    expect(ids).toEqual(["z", "a"]);
    await db.store.insertExecution(execution("x-there"));
    const started = await db.store.transaction((tx) =>
      tx.insertExecutions([execution("x-z"), execution("x-there"), execution("x-a"), execution("x-z")]),
    );
    expect(started).toEqual(["x-z", "x-a"]);
  });

  it("advances schedules under their compare-and-set, writing only what a fire changes", async () => {
    await db.store.insertSchedule(schedule("s1"));
    await db.store.insertSchedule(schedule("s2"));
    await db.store.insertSchedule(schedule("s3", { nextFireMs: null, dueMs: T0, buffered: [T0] }));
    const fired = (id: string) => ({
      ...schedule(id),
      // Not written by advanceSchedules: the stored values stay.
      workflow: "Changed",
      spec: { changed: true },
      updatedMs: T0 + 99,
      // Written:
      nextFireMs: T0 + 20_000,
      dueMs: T0 + 20_001,
      fired: 1,
      skipped: 2,
      lastFireMs: T0 + 10_000,
      lastExecutionId: `${id}:x`,
      lastError: null,
      buffered: [T0 + 5, T0 + 6],
    });
    const matched = await db.store.transaction((tx) =>
      tx.advanceSchedules([
        { row: fired("s1"), expectedRevision: 1, expectedNextFireMs: T0 + 10_000 },
        { row: fired("s2"), expectedRevision: 1, expectedNextFireMs: T0 }, // next_fire_ms differs
        {
          row: { ...fired("s3"), state: "ended", nextFireMs: null, dueMs: null, buffered: [] },
          expectedRevision: 1,
          expectedNextFireMs: null,
        },
      ]),
    );
    expect(matched.sort()).toEqual(["s1", "s3"]);
    expect(await db.store.getSchedule("s1")).toEqual({
      ...schedule("s1"),
      nextFireMs: T0 + 20_000,
      dueMs: T0 + 20_001,
      fired: 1,
      skipped: 2,
      lastFireMs: T0 + 10_000,
      lastExecutionId: "s1:x",
      buffered: [T0 + 5, T0 + 6],
      revision: 2,
    });
    expect(await db.store.getSchedule("s2")).toEqual(schedule("s2"));
    expect(await db.store.getSchedule("s3")).toMatchObject({
      state: "ended",
      nextFireMs: null,
      dueMs: null,
      revision: 2,
    });
    // The same claim cannot win twice.
    expect(
      await db.store.advanceSchedules([{ row: fired("s1"), expectedRevision: 1, expectedNextFireMs: T0 + 10_000 }]),
    ).toEqual([]);
  });

  it("appends ledger rows in the order given", async () => {
    await db.store.appendOccurrences([
      { scheduleId: "s", kind: "started", occurrenceMs: T0, executionId: "s:0", recordedMs: T0 },
      { scheduleId: "t", kind: "buffered", occurrenceMs: T0, recordedMs: T0 },
      {
        scheduleId: "s",
        kind: "skipped",
        occurrenceMs: null,
        rangeFromMs: T0,
        rangeToMs: T0 + 9000,
        count: 10,
        reason: "missed",
        recordedMs: T0,
      },
      { scheduleId: "s", kind: "dead_letter", occurrenceMs: T0 + 1, error: 'bad "input"', recordedMs: T0 + 2 },
    ]);
    await db.store.appendOccurrences([]);
    const rows = await db.store.listOccurrences("s", { limit: 10 });
    expect(rows.map((r) => r.kind)).toEqual(["dead_letter", "skipped", "started"]);
    expect(rows[0]).toMatchObject({ error: 'bad "input"', count: 1, recordedMs: T0 + 2 });
    expect(rows[1]).toMatchObject({
      count: 10,
      rangeFromMs: T0,
      rangeToMs: T0 + 9000,
      reason: "missed",
      executionId: null,
    });
    expect(rows[2]).toMatchObject({ executionId: "s:0", occurrenceMs: T0, count: 1, reason: null });
    expect(await db.store.listOccurrences("t", { limit: 10 })).toHaveLength(1);
  });

  it("leases a poll's tasks in one statement, once: the lease is the pending row's compare-and-set", async () => {
    for (const id of ["a", "b", "c"]) await db.store.insertExecution(execution(id));
    await db.store.transaction((tx) => tx.insertTasks([task("t-a", "a"), task("t-b", "b"), task("t-c", "c")]));
    const lease = {
      owner: "w1",
      identity: "team-a",
      instance: null,
      leaseUntilMs: T0 + 30_000,
      maxAttempts: 3,
      backoffMs: 1000,
    };
    const first = await db.store.transaction((tx) => tx.leaseTasks(["t-a", "t-b", "missing"], lease));
    expect(first.sort()).toEqual(["t-a", "t-b"]);
    // Leased already: a second lease of the same tasks (another poll, another server) gets none of them.
    const second = await db.store.transaction((tx) =>
      tx.leaseTasks(["t-a", "t-b", "t-c"], { ...lease, owner: "w2", identity: null }),
    );
    expect(second).toEqual(["t-c"]);
    expect(await db.store.getTaskLease("t-a")).toMatchObject({
      state: "leased",
      leaseOwner: "w1",
      leaseIdentity: "team-a",
      leaseUntilMs: T0 + 30_000,
      maxAttempts: 3,
      backoffMs: 1000,
    });
    expect((await db.store.getTaskLease("t-c"))?.leaseIdentity).toBeNull();
    // A heartbeat renews only leases of its identity (or leases taken without one): the same
    // worker_id from another identity renews nothing (docs/security.md § Identities).
    const renew = (owner: string, identity: string | null, ids: string[]) =>
      db.store.extendLeases(owner, identity, ids, T0 + 60_000, T0);
    expect(await renew("w1", "team-b", ["t-a", "t-b"])).toEqual([]);
    expect((await renew("w1", "team-a", ["t-a", "t-b"])).sort()).toEqual(["t-a", "t-b"]);
    expect(await renew("w1", null, ["t-a"])).toEqual(["t-a"]);
    expect(await renew("w2", "team-b", ["t-c"])).toEqual(["t-c"]);
    expect(await db.store.transaction((tx) => tx.leaseTasks([], lease))).toEqual([]);

    const locked = await db.store.transaction((tx) => tx.lockExecutionsIfFree(["a", "c", "missing"]));
    expect(locked.map((e) => e.executionId).sort()).toEqual(["a", "c"]);
    expect(locked.find((e) => e.executionId === "a")).toEqual(execution("a"));

    await db.store.appendEvent("a", "WorkflowCreated", {}, T0);
    await db.store.transaction((tx) =>
      tx.appendEvents([
        { executionId: "a", type: "WorkflowTaskStarted", data: { worker_id: "w1" }, atMs: T0 + 1 },
        { executionId: "b", type: "WorkflowTaskStarted", data: { worker_id: "w1" }, atMs: T0 + 2 },
      ]),
    );
    expect((await db.store.listEvents("a")).map((e) => [e.seq, e.type, e.data])).toEqual([
      [1, "WorkflowCreated", {}],
      [2, "WorkflowTaskStarted", { worker_id: "w1" }],
    ]);
    expect((await db.store.listEvents("b")).map((e) => [e.seq, e.atMs])).toEqual([[1, T0 + 2]]);
    await expect(
      db.store.transaction((tx) =>
        tx.appendEvents([
          { executionId: "c", type: "X", data: {}, atMs: T0 },
          { executionId: "c", type: "Y", data: {}, atMs: T0 },
        ]),
      ),
    ).rejects.toThrow(/one event per execution/);

    const step = (executionId: string, run: number, name: string, seq: number) => ({
      executionId,
      run,
      step: name,
      seq,
      result: { n: seq },
      hasCompensation: false,
      compensatedMs: null,
      completedMs: T0 + seq,
    });
    await db.store.insertStepResult(step("a", 1, "two", 2));
    await db.store.insertStepResult(step("a", 1, "one", 1));
    await db.store.insertStepResult(step("a", 2, "again", 1));
    await db.store.insertStepResult(step("c", 1, "other", 1));
    const steps = await db.store.listStepResultsOf(["a", "b"]);
    expect(steps.map((s) => [s.executionId, s.run, s.step])).toEqual([
      ["a", 1, "one"],
      ["a", 1, "two"],
      ["a", 2, "again"],
    ]);
    expect(steps[0]).toEqual(step("a", 1, "one", 1));
    expect(await db.store.listStepResultsOf([])).toEqual([]);
  });
});
