/** WorkerTasks.completeMany (POST /v1/worker/complete): one transaction, an answer per task. */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { OrbitError } from "../../src/domain/errors.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];

/** A server's task engine on `store` at a manual clock, with workflow W@1.0.0 registered. */
async function engine(store: Store) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const workflows = new Workflows({ store, clock });
  const executions = new Executions({ store, clock, workflows });
  const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
  await workflows.register({ name: "W", version: "1.0.0" });
  return { clock, executions, tasks };
}

describeEachDialect("batched completes", (dialect) => {
  const db = useStore(dialect);

  it("completes every task the worker holds and answers CONFLICT for the others, which stay as they were", async () => {
    const store = db.store;
    const { executions, tasks } = await engine(store);
    const ended: string[] = [];
    executions.subscribeEnded((e) => ended.push(e.executionId));
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
    const { executions, tasks } = await engine(store);
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

  it("a heartbeat PostgreSQL aborted to break a deadlock renews the leases on its second try, not a 503", async () => {
    const store = db.store;
    const { clock, executions, tasks } = await engine(store);
    await executions.start({ executionId: "h", workflow: "W", input: {} });
    const [task] = await tasks.claim({ worker_id: "w1", workflows: offer, max_tasks: 1 });
    // The renewal statement is chosen as a deadlock's victim once (a fire's cancel_previous held
    // an execution and waited for its task), as a tester saw 17 times in 35 minutes.
    const extend = store.extendLeases.bind(store);
    let aborts = 1;
    store.extendLeases = (...args) => {
      if (aborts-- > 0) {
        const reason = "the database aborted the transaction (deadlock detected); nothing of it was kept, retry";
        return Promise.reject(new OrbitError("UNAVAILABLE", reason, { aborted: true }));
      }
      return extend(...args);
    };
    try {
      clock.advance(20_000);
      const hb = await tasks.heartbeat({ workerId: "w1", identity: null }, [task!.task_id]);
      expect(hb.tasks[task!.task_id]).toEqual({ lease: "held", cancel_requested: null });
      expect((await store.getTaskLease(task!.task_id))?.leaseUntilMs).toBe(Date.UTC(2026, 0, 1) + 50_000);
    } finally {
      store.extendLeases = extend;
    }
  });
});
