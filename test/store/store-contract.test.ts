import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { execution, schedule, T0 } from "./fixtures/records.js";

/** A promise plus its resolver, to hold a transaction open exactly as long as a test wants. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Lets every already-runnable callback (and I/O completion) run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describeEachDialect("store transactions", (dialect) => {
  const db = useStore(dialect);

  it("commits when the callback resolves and rolls back everything when it throws", async () => {
    await db.store.transaction(async (tx) => {
      await tx.insertExecution(execution("kept"));
      await tx.appendEvent("kept", "WorkflowCreated", {}, T0);
    });
    const boom = new Error("boom");
    await expect(
      db.store.transaction(async (tx) => {
        await tx.insertExecution(execution("lost"));
        await tx.appendEvent("lost", "WorkflowCreated", {}, T0);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await db.store.getExecution("kept")).not.toBeNull();
    expect(await db.store.getExecution("lost")).toBeNull();
    expect(await db.store.listEvents("lost")).toEqual([]);
  });

  it("keeps an operation issued during an open transaction out of that transaction", async () => {
    const hold = gate();
    const inserted = gate();
    const failing = db.store.transaction(async (tx) => {
      await tx.insertExecution(execution("inside"));
      inserted.open();
      await hold.promise;
      throw new Error("roll back");
    });
    await inserted.promise;
    // Issued while the transaction is open; must neither join it nor see its uncommitted row.
    const outsideRead = db.store.getExecution("inside");
    const outsideWrite = db.store.insertExecution(execution("outside"));
    await settle();
    hold.open();
    await expect(failing).rejects.toThrow("roll back");
    expect(await outsideRead).toBeNull();
    expect(await outsideWrite).toBe(true);
    expect(await db.store.getExecution("outside")).not.toBeNull();
    expect(await db.store.getExecution("inside")).toBeNull();
  });

  it("refuses a tx object after its transaction ended", async () => {
    let leaked: Parameters<Parameters<typeof db.store.transaction>[0]>[0] | undefined;
    await db.store.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.getExecution("x")).rejects.toThrow(/already ended/);
  });

  it.skipIf(dialect.name !== "sqlite")(
    "throws instead of deadlocking when the store is used inside its own transaction",
    async () => {
      await expect(db.store.transaction(async () => db.store.getExecution("x"))).rejects.toThrow(/use the tx argument/);
      expect(await db.store.insertExecution(execution("after"))).toBe(true);
    },
  );

  it("numbers events per execution from 1", async () => {
    await db.store.insertExecution(execution("e"));
    await db.store.appendEvent("e", "A", { n: 1 }, T0);
    await db.store.appendEvent("e", "B", { nested: { list: [1, "two", null] } }, T0 + 1);
    await db.store.appendEvent("other", "A", {}, T0);
    const events = await db.store.listEvents("e");
    expect(events.map((e) => [e.seq, e.type, e.atMs])).toEqual([
      [1, "A", T0],
      [2, "B", T0 + 1],
    ]);
    expect(events[1]?.data).toEqual({ nested: { list: [1, "two", null] } });
  });

  it("returns BIGINT instants as exact JS numbers", async () => {
    const far = Date.UTC(2100, 0, 1, 0, 0, 0, 123);
    await db.store.insertExecution(execution("far", { createdMs: far, endedMs: far + 1 }));
    const got = await db.store.getExecution("far");
    expect(got?.createdMs).toBe(far);
    expect(got?.endedMs).toBe(far + 1);
    expect(typeof (await db.store.countActiveExecutions())).toBe("number");
  });

  it("close is idempotent and later operations fail plainly", async () => {
    const second = await db.location.open();
    await second.close();
    await second.close();
    await expect(second.getExecution("x")).rejects.toThrow(/not open/);
  });
});

describeEachDialect("store schedules and ledger", (dialect) => {
  const db = useStore(dialect);

  it("inserts once, updates with compare-and-set on revision (and next_fire_ms), deletes with a fence", async () => {
    const row = schedule("s1");
    expect(await db.store.insertSchedule(row)).toBe(true);
    expect(await db.store.insertSchedule({ ...row, workflow: "Other" })).toBe(false);
    expect(await db.store.getSchedule("s1")).toEqual(row);

    const fired = { ...row, fired: 1, nextFireMs: T0 + 20_000, dueMs: T0 + 20_000, lastExecutionId: "s1:x" };
    expect(await db.store.updateSchedule(fired, { expectedRevision: 2 })).toBeNull();
    expect(await db.store.updateSchedule(fired, { expectedRevision: 1, expectedNextFireMs: T0 })).toBeNull();
    const stored = await db.store.updateSchedule(fired, { expectedRevision: 1, expectedNextFireMs: T0 + 10_000 });
    expect(stored).toEqual({ ...fired, revision: 2 });
    // The same claim cannot win twice.
    expect(await db.store.updateSchedule(fired, { expectedRevision: 1 })).toBeNull();

    const ended = { ...fired, state: "ended" as const, nextFireMs: null, dueMs: null };
    expect(
      await db.store.updateSchedule(ended, { expectedRevision: 2, expectedNextFireMs: T0 + 20_000 }),
    ).not.toBeNull();
    expect(await db.store.updateSchedule(ended, { expectedRevision: 3, expectedNextFireMs: null })).not.toBeNull();

    expect(await db.store.deleteSchedule("s1", 3)).toBe(false);
    expect(await db.store.deleteSchedule("s1", 4)).toBe(true);
    expect(await db.store.getSchedule("s1")).toBeNull();
  });

  it("deletes a schedule's ledger with it, and no other schedule's", async () => {
    await db.store.insertSchedule(schedule("gone"));
    await db.store.insertSchedule(schedule("kept"));
    for (const id of ["gone", "kept"]) {
      await db.store.appendOccurrence({ scheduleId: id, kind: "started", occurrenceMs: T0, recordedMs: T0 });
    }
    expect(await db.store.deleteSchedule("gone", 99)).toBe(false);
    expect(await db.store.listOccurrences("gone", { limit: 10 })).toHaveLength(1);
    await db.store.transaction(async (tx) => {
      expect(await tx.deleteSchedule("gone")).toBe(true);
    });
    // A schedule created again under the same id must not inherit the deleted one's decisions.
    expect(await db.store.listOccurrences("gone", { limit: 10 })).toEqual([]);
    expect(await db.store.listOccurrences("kept", { limit: 10 })).toHaveLength(1);
  });

  it("lists due active schedules by due time, with a limit, and knows the next due time", async () => {
    await db.store.insertSchedule(schedule("late", { dueMs: T0 + 3000 }));
    await db.store.insertSchedule(schedule("early", { dueMs: T0 + 1000 }));
    await db.store.insertSchedule(schedule("b-same", { dueMs: T0 + 2000 }));
    await db.store.insertSchedule(schedule("a-same", { dueMs: T0 + 2000 }));
    await db.store.insertSchedule(schedule("future", { dueMs: T0 + 60_000 }));
    await db.store.insertSchedule(schedule("paused", { dueMs: T0, state: "paused", paused: true }));
    await db.store.insertSchedule(schedule("ended", { dueMs: null, nextFireMs: null, state: "ended" }));
    const due = await db.store.listDueSchedules({ dueAtOrBeforeMs: T0 + 3000, limit: 10 });
    expect(due.map((s) => s.scheduleId)).toEqual(["early", "a-same", "b-same", "late"]);
    const limited = await db.store.listDueSchedules({ dueAtOrBeforeMs: T0 + 3000, limit: 2 });
    expect(limited.map((s) => s.scheduleId)).toEqual(["early", "a-same"]);
    expect(await db.store.nextDueMs()).toBe(T0 + 1000);
    expect((await db.store.listSchedules({ limit: 3 })).map((s) => s.scheduleId)).toEqual([
      "a-same",
      "b-same",
      "early",
    ]);
    expect((await db.store.listSchedules({ afterId: "future", limit: 10 })).map((s) => s.scheduleId)).toEqual([
      "late",
      "paused",
    ]);
  });

  it("lists schedules by id of one workflow and one state, the limit counting only those", async () => {
    await db.store.insertSchedule(schedule("a", { workflow: "X" }));
    await db.store.insertSchedule(schedule("b", { workflow: "Y" }));
    await db.store.insertSchedule(schedule("c", { workflow: "X", state: "paused", paused: true }));
    await db.store.insertSchedule(schedule("d", { workflow: "X" }));
    await db.store.insertSchedule(schedule("e", { workflow: "X" }));
    const ids = async (opts: Parameters<typeof db.store.listSchedules>[0]) =>
      (await db.store.listSchedules(opts)).map((s) => s.scheduleId);
    expect(await ids({ workflow: "X", limit: 2 })).toEqual(["a", "c"]);
    expect(await ids({ workflow: "X", state: "active", limit: 2 })).toEqual(["a", "d"]);
    expect(await ids({ workflow: "X", state: "active", afterId: "a", limit: 10 })).toEqual(["d", "e"]);
    expect(await ids({ state: "paused", limit: 10 })).toEqual(["c"]);
    expect(await ids({ workflow: "Z", limit: 10 })).toEqual([]);
  });

  it("reads a row's stored settings back as one shared, unchangeable object while the text is unchanged", async () => {
    await db.store.insertSchedule(schedule("s", { spec: { interval: "10s", overlap: "skip", labels: { a: "b" } } }));
    const first = await db.store.getSchedule("s");
    const again = await db.store.getSchedule("s");
    expect(again?.spec).toEqual({ interval: "10s", overlap: "skip", labels: { a: "b" } });
    expect(Object.isFrozen(again?.spec) && Object.isFrozen(again?.spec.labels)).toBe(dialect.name === "sqlite");
    if (dialect.name === "sqlite") expect(again?.spec).toBe(first?.spec);
    const changed = { ...(again as NonNullable<typeof again>), spec: { interval: "20s", overlap: "skip" } };
    await db.store.updateSchedule(changed, { expectedRevision: 1 });
    expect((await db.store.getSchedule("s"))?.spec).toEqual({ interval: "20s", overlap: "skip" });
  });

  it("appends ledger rows and pages them newest first, by kind, and prunes to the newest N", async () => {
    for (let i = 0; i < 5; i++) {
      await db.store.appendOccurrence({
        scheduleId: "s",
        kind: i === 3 ? "dead_letter" : "started",
        occurrenceMs: T0 + i * 1000,
        executionId: `s:${i}`,
        error: i === 3 ? "workflow W is not registered" : null,
        recordedMs: T0 + i * 1000 + 5,
      });
    }
    const missed = await db.store.appendOccurrence({
      scheduleId: "s",
      kind: "skipped",
      occurrenceMs: null,
      rangeFromMs: T0,
      rangeToMs: T0 + 86_399_000,
      count: 86_400,
      reason: "missed",
      recordedMs: T0,
    });
    expect(missed).toMatchObject({ count: 86_400, reason: "missed", rangeToMs: T0 + 86_399_000, executionId: null });
    await db.store.appendOccurrence({ scheduleId: "other", kind: "buffered", occurrenceMs: T0, recordedMs: T0 });

    const first = await db.store.listOccurrences("s", { limit: 4 });
    expect(first.map((o) => o.kind)).toEqual(["skipped", "started", "dead_letter", "started"]);
    const second = await db.store.listOccurrences("s", { limit: 4, beforeId: first[3]!.id });
    expect(second.map((o) => o.executionId)).toEqual(["s:1", "s:0"]);
    const dead = await db.store.listOccurrences("s", { limit: 10, kinds: ["dead_letter"] });
    expect(dead.map((o) => o.error)).toEqual(["workflow W is not registered"]);

    expect(await db.store.pruneOccurrences("s", 2)).toBe(4);
    expect((await db.store.listOccurrences("s", { limit: 10 })).map((o) => o.kind)).toEqual(["skipped", "started"]);
    expect(await db.store.listOccurrences("other", { limit: 10 })).toHaveLength(1);
  });

  it("stores idempotency keys once per scope and key", async () => {
    const record = {
      scope: "POST /v1/schedules",
      key: "k1",
      requestHash: "h1",
      response: { ok: true },
      status: 201,
      createdMs: T0,
    };
    expect(await db.store.insertIdempotencyKey(record)).toBe(true);
    expect(await db.store.insertIdempotencyKey({ ...record, requestHash: "h2" })).toBe(false);
    expect(await db.store.getIdempotencyKey("POST /v1/schedules", "k1")).toEqual(record);
    expect(await db.store.getIdempotencyKey("other", "k1")).toBeNull();
    expect(await db.store.deleteIdempotencyKeysBefore(T0 + 1)).toBe(1);
  });

  it.skipIf(dialect.name !== "postgres")("gives concurrent claimers disjoint due rows with SKIP LOCKED", async () => {
    for (const id of ["a", "b", "c", "d"]) await db.store.insertSchedule(schedule(id, { dueMs: T0 }));
    const other = await db.location.open();
    const hold = gate();
    const claimed = gate();
    const first = db.store.transaction(async (tx) => {
      const rows = await tx.listDueSchedules({ dueAtOrBeforeMs: T0, limit: 2, skipLocked: true });
      claimed.open();
      await hold.promise;
      return rows.map((r) => r.scheduleId);
    });
    await claimed.promise;
    const second = await other.transaction(async (tx) =>
      (await tx.listDueSchedules({ dueAtOrBeforeMs: T0, limit: 10, skipLocked: true })).map((r) => r.scheduleId),
    );
    hold.open();
    expect(await first).toEqual(["a", "b"]);
    expect(second).toEqual(["c", "d"]);
  });
});
