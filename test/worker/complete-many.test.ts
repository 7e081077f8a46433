/** WorkerTasks.completeMany (POST /v1/worker/complete): one transaction, an answer per task. */
import { expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];

describeEachDialect("batched completes", (dialect) => {
  const db = useStore(dialect);

  it("completes every task the worker holds and answers CONFLICT for the others, which stay as they were", async () => {
    const store = db.store;
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const workflows = new Workflows({ store, clock });
    const ended: string[] = [];
    const executions = new Executions({ store, clock, workflows });
    executions.subscribeEnded((e) => ended.push(e.executionId));
    const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
    await workflows.register({ name: "W", version: "1.0.0" });
    for (const id of ["a", "b", "c"]) await executions.start({ executionId: id, workflow: "W", input: {} });
    const mine = await tasks.claim({ worker_id: "w1", workflows: offer, max_tasks: 2 });
    const theirs = await tasks.claim({ worker_id: "w2", workflows: offer, max_tasks: 1 });
    expect(mine).toHaveLength(2);
    expect(theirs).toHaveLength(1);
    const [a, b] = mine;
    const answers = await tasks.completeMany({ workerId: "w1", identity: null }, [
      { task_id: a!.task_id, result: { n: 1 } },
      { task_id: theirs[0]!.task_id, result: { n: 2 } },
      { task_id: b!.task_id, result: null },
      { task_id: a!.task_id, result: { n: 3 } },
      { task_id: "no-such-task", result: null },
    ]);
    expect(answers[a!.task_id]).toMatchObject({ code: "CONFLICT" }); // the repeat: already done
    expect(answers[b!.task_id]).toEqual({ status: "COMPLETED" });
    expect(answers[theirs[0]!.task_id]).toMatchObject({ code: "CONFLICT" });
    expect(answers["no-such-task"]).toMatchObject({ code: "NOT_FOUND" });
    const first = await store.getExecution(a!.execution_id);
    expect(first).toMatchObject({ status: "COMPLETED", result: { n: 1 } });
    expect(await store.getExecution(b!.execution_id)).toMatchObject({ status: "COMPLETED", result: null });
    expect(await store.getExecution(theirs[0]!.execution_id)).toMatchObject({ status: "RUNNING" });
    expect((await store.listEvents(a!.execution_id)).filter((e) => e.type === "WorkflowCompleted")).toHaveLength(1);
    expect((await store.getTaskForExecution(theirs[0]!.execution_id))?.leaseOwner).toBe("w2");
    // The scheduler hears of each end once, after the commit.
    expect(ended.sort()).toEqual([a!.execution_id, b!.execution_id].sort());
  });

  it("answers PERMISSION_DENIED for a lease another identity took, even under the same worker_id (docs/security.md)", async () => {
    const store = db.store;
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const workflows = new Workflows({ store, clock });
    const executions = new Executions({ store, clock, workflows });
    const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
    await workflows.register({ name: "W", version: "1.0.0" });
    for (const id of ["x", "y"]) await executions.start({ executionId: id, workflow: "W", input: {} });
    const [mine] = await tasks.claim({ worker_id: "w1", workflows: offer, max_tasks: 1 }, false, "team-a");
    const [theirs] = await tasks.claim({ worker_id: "w1", workflows: offer, max_tasks: 1 }, false, "team-b");
    expect((await store.getTaskLease(theirs!.task_id))?.leaseIdentity).toBe("team-b");
    const answers = await tasks.completeMany({ workerId: "w1", identity: "team-a" }, [
      { task_id: theirs!.task_id, result: { forged: true } },
      { task_id: mine!.task_id, result: { ok: true } },
    ]);
    const events = await store.listEvents(theirs!.execution_id);
    expect(answers[theirs!.task_id]).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(answers[mine!.task_id]).toEqual({ status: "COMPLETED" });
    expect(await store.getExecution(theirs!.execution_id)).toMatchObject({ status: "RUNNING", result: null });
    // Every other report on it too; the heartbeat does not renew it.
    const forger = { workerId: "w1", identity: "team-a" };
    const refusals: (() => Promise<unknown>)[] = [
      () => tasks.complete(theirs!.task_id, forger, 1),
      () => tasks.fail(theirs!.task_id, forger, { message: "x" }, false),
      () => tasks.step(theirs!.task_id, forger, { worker_id: "w1", step: "s", seq: 1, result: 1, compensable: false }),
      () => tasks.continueAsNew(theirs!.task_id, forger, {}),
      () => tasks.cancelled(theirs!.task_id, forger, null),
    ];
    // One at a time: each is awaited as it is made, so no refusal goes unhandled meanwhile.
    for (const refuse of refusals) await expect(refuse()).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(await tasks.release(forger, [theirs!.task_id])).toEqual([]);
    const hb = await tasks.heartbeat(forger, [theirs!.task_id]);
    expect(hb.tasks[theirs!.task_id]?.lease).toBe("lost");
    expect(await store.getTaskLease(theirs!.task_id)).toMatchObject({
      state: "leased",
      leaseOwner: "w1",
      leaseIdentity: "team-b",
      leaseUntilMs: Date.UTC(2026, 0, 1) + 30_000,
    });
    expect(await store.listEvents(theirs!.execution_id)).toEqual(events);
    // The identity that took it still may.
    const done = await tasks.complete(theirs!.task_id, { workerId: "w1", identity: "team-b" }, { ok: 1 });
    expect(done.status).toBe("COMPLETED");
  });
});

describeEachDialect("complete and poll", (dialect) => {
  const db = useStore(dialect);

  it("completes the batch and leases up to max_tasks more in one transaction, one fewer per task a cancel keeps", async () => {
    const store = db.store;
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const workflows = new Workflows({ store, clock });
    const executions = new Executions({ store, clock, workflows });
    const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
    await workflows.register({ name: "W", version: "1.0.0" });
    for (const id of ["a", "b", "c"]) await executions.start({ executionId: id, workflow: "W", input: {} });
    const first = await tasks.claim({ worker_id: "w1", workflows: offer, max_tasks: 3 }, false, "team-a");
    expect(first).toHaveLength(3);
    for (const id of ["d", "e", "f", "g", "h"]) await executions.start({ executionId: id, workflow: "W", input: {} });
    await executions.cancel("c", { reason: "stop" }); // its completion is answered CANCEL_REQUESTED
    const transactions = vi.spyOn(store, "transaction");
    const holder = { workerId: "w1", identity: "team-a" };
    const { answers, leased } = await tasks.completeAndPoll(
      holder,
      first.map((t) => ({ task_id: t.task_id, result: { done: t.execution_id } })),
      { worker_id: "w1", workflows: offer, max_tasks: 4 },
    );
    expect(transactions).toHaveBeenCalledTimes(1);
    transactions.mockRestore();
    const byExecution = Object.fromEntries(first.map((t) => [t.execution_id, answers[t.task_id]]));
    expect(byExecution).toEqual({
      a: { status: "COMPLETED" },
      b: { status: "COMPLETED" },
      c: { status: "CANCEL_REQUESTED", cancel_requested: "stop" },
    });
    // max_tasks 4, minus the one task (c) that keeps its slot to compensate: the three oldest pending.
    expect(leased.map((t) => t.execution_id)).toEqual(["d", "e", "f"]);
    for (const t of leased) {
      expect(await store.getTaskLease(t.task_id)).toMatchObject({
        state: "leased",
        leaseOwner: "w1",
        leaseIdentity: "team-a",
        leaseUntilMs: clock.now() + tasks.leaseMs,
      });
      const events = (await store.listEvents(t.execution_id)).map((e) => [e.type, e.data.worker_id ?? null]);
      expect(events).toEqual([
        ["WorkflowCreated", null],
        ["WorkflowTaskStarted", "w1"],
      ]);
    }
    expect(await store.getExecution("a")).toMatchObject({ status: "COMPLETED", result: { done: "a" } });
    expect((await store.getTaskForExecution("g"))?.state).toBe("pending");
    // Without max_tasks, as many as the batch's size; a lease that finds nothing answers none.
    const again = await tasks.completeAndPoll(
      holder,
      leased.map((t) => ({ task_id: t.task_id, result: null })),
      { worker_id: "w1", workflows: offer },
    );
    expect(again.leased.map((t) => t.execution_id)).toEqual(["g", "h"]);
    const last = await tasks.completeAndPoll(
      holder,
      again.leased.map((t) => ({ task_id: t.task_id, result: null })),
      { worker_id: "w1", workflows: offer, max_tasks: 100 },
    );
    expect(last.leased).toEqual([]);
    expect(Object.values(last.answers)).toEqual([{ status: "COMPLETED" }, { status: "COMPLETED" }]);
  });
});
