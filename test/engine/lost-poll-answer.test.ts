/**
 * A poll's answer that never reached its worker (docs/workflows.md § Protocol): the worker's next
 * poll names the tasks it runs (`held`), and the tasks leased to it that it does not name are
 * answered again, the same attempt, their leases renewed. They waited out the lease before (30 s,
 * longer across a server restart) and ran as the next attempt (two testers: one waited 2 min).
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

const OFFER = [{ name: "Refund", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];
const HOLDER = { workerId: "w", identity: null };

describeEachDialect("a lost poll answer", (dialect) => {
  const db = useStore(dialect);

  it("is answered again to the worker's next poll that says what it holds, and only to it", async () => {
    const { clock, executions, tasks } = await engineAt(db.store, Date.UTC(2026, 11, 7, 19, 0, 0), "Refund");
    for (const id of ["lost", "kept"]) await executions.start({ executionId: id, workflow: "Refund" });
    const first = await tasks.poll({ worker_id: "w", workflows: OFFER, max_tasks: 2, wait_ms: 0 });
    expect(first.map((t) => t.execution_id).sort()).toEqual(["kept", "lost"]);
    const kept = first.find((t) => t.execution_id === "kept");
    const lost = first.find((t) => t.execution_id === "lost");
    // The worker got only "kept" (say the answer was cut and a retry of the same tasks is moot):
    // it journaled a step of "lost" nowhere and holds "kept".
    await tasks.step(kept!.task_id, HOLDER, { worker_id: "w", step: "s", seq: 1, result: 1, compensable: false });
    clock.advance(10_000);
    // A plain poll (no `held`) is not handed what is leased: nothing new is pending.
    expect(await tasks.poll({ worker_id: "w", workflows: OFFER, max_tasks: 2, wait_ms: 0 })).toEqual([]);
    // Another worker's poll that says what it holds gets nothing of w's.
    expect(await tasks.poll({ worker_id: "x", workflows: OFFER, max_tasks: 2, wait_ms: 0, held: [] })).toEqual([]);
    const again = await tasks.poll({
      worker_id: "w",
      workflows: OFFER,
      max_tasks: 2,
      wait_ms: 0,
      held: [kept!.task_id],
    });
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ task_id: lost!.task_id, execution_id: "lost", attempt: 1, run: 1 });
    // Its lease was renewed at the second answer: 25 s later it still holds it (30 s lease).
    clock.advance(25_000);
    const beat = await tasks.heartbeat(HOLDER, [lost!.task_id, kept!.task_id]);
    expect(beat.tasks[lost!.task_id]?.lease).toBe("held");
    expect(beat.tasks[kept!.task_id]?.lease).toBe("lost");
    // Still one WorkflowTaskStarted for it: the attempt was not started twice.
    const events = await db.store.listEvents("lost");
    expect(events.filter((e) => e.type === "WorkflowTaskStarted")).toHaveLength(1);
  });

  it("answers a task whose lease already ended to no one this way: the reaper's", async () => {
    const { clock, executions, tasks } = await engineAt(db.store, Date.UTC(2026, 11, 7, 19, 0, 0), "Refund");
    await executions.start({ executionId: "late", workflow: "Refund" });
    const [task] = await tasks.poll({ worker_id: "w", workflows: OFFER, max_tasks: 1, wait_ms: 0 });
    clock.advance(tasks.leaseMs + 1);
    expect(await tasks.poll({ worker_id: "w", workflows: OFFER, max_tasks: 1, wait_ms: 0, held: [] })).toEqual([]);
    expect(await tasks.reap(task!.task_id)).toBe(true);
  });
});
