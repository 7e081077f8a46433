/**
 * Two worker processes under one `worker_id` (docs/workflows.md § Protocol): each poll says which
 * process it comes from (`instance`), the lease records it, and the redelivery after a lost poll
 * answer (`held`) answers a process only its own tasks. Before, a tester's two workers named
 * "billing" both sent `held` after a server restart, each was handed the other's running tasks, and
 * every step of 6 executions ran twice.
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { PollRequestJson, WorkflowOfferJson } from "../../src/domain/worker-protocol.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskHandOff } from "../../src/engine/task-hand-off.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const OFFER: WorkflowOfferJson[] = [{ name: "Saga", version: "1.0.0", max_attempts: 2, backoff_ms: 0 }];

describeEachDialect("two processes sharing a worker_id", (dialect) => {
  const db = useStore(dialect);

  async function setUp() {
    const clock = new ManualClock(Date.UTC(2026, 11, 9, 8, 0, 0));
    const store = db.store;
    const workflows = new Workflows({ store, clock });
    const handOff = new TaskHandOff();
    const executions = new Executions({ store, clock, workflows, handOff });
    const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock), handOff });
    await workflows.register({ name: "Saga", version: "1.0.0" });
    const poll = (instance: string | undefined, more: Partial<PollRequestJson> = {}) =>
      tasks.poll({
        worker_id: "billing",
        workflows: OFFER,
        max_tasks: 10,
        wait_ms: 0,
        ...(instance === undefined ? {} : { instance }),
        ...more,
      });
    const ids = (answer: { execution_id: string }[]) => answer.map((t) => t.execution_id).sort();
    return { clock, store, handOff, tasks, executions, poll, ids };
  }

  it("answers each process only its own tasks when both say what they hold", async () => {
    const { executions, poll, ids, store } = await setUp();
    for (const id of ["a1", "a2"]) await executions.start({ executionId: id, workflow: "Saga" });
    const one = await poll("process-1");
    for (const id of ["b1", "b2"]) await executions.start({ executionId: id, workflow: "Saga" });
    const two = await poll("process-2");
    expect(ids(one)).toEqual(["a1", "a2"]);
    expect(ids(two)).toEqual(["b1", "b2"]);
    // The server restarted: both processes' polls got no answer, and both name what they run.
    expect(await poll("process-1", { held: one.map((t) => t.task_id) })).toEqual([]);
    expect(await poll("process-2", { held: two.map((t) => t.task_id) })).toEqual([]);
    // A process's own lost answer is still answered again, and only its own.
    const again = await poll("process-1", { held: [one[0]!.task_id] });
    expect(ids(again)).toEqual([one[1]!.execution_id]);
    for (const id of ["a1", "a2", "b1", "b2"]) {
      const started = (await store.listEvents(id)).filter((e) => e.type === "WorkflowTaskStarted");
      expect(started, id).toHaveLength(1);
    }
  });

  it("records the process of a task handed to a parked poll at its start", async () => {
    const { executions, poll, ids, handOff } = await setUp();
    const parked = poll("process-1", { wait_ms: 60_000 });
    while (handOff.waiting === 0) await new Promise((resolve) => setImmediate(resolve));
    await executions.start({ executionId: "handed", workflow: "Saga" });
    expect(ids(await parked)).toEqual(["handed"]);
    expect(await poll("process-2", { held: [] })).toEqual([]);
    expect(ids(await poll("process-1", { held: [] }))).toEqual(["handed"]);
  });

  it("answers a poll without an instance (an older SDK) every task leased to the worker id, as before", async () => {
    const { executions, poll, ids } = await setUp();
    await executions.start({ executionId: "a", workflow: "Saga" });
    await poll("process-1");
    await executions.start({ executionId: "b", workflow: "Saga" });
    await poll(undefined);
    expect(ids(await poll(undefined, { held: [] }))).toEqual(["a", "b"]);
  });
});
