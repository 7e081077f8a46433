/**
 * The hand-off to a parked poll (docs/workflows.md § Leases, wake-ups and the reaper): a long poll
 * that found nothing and waits is woken by a new task and leases it at once, on SQLite ahead of
 * the worker traffic queued while the firing loop reserves the connection (between its batches).
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];

/** The store, with a promise that resolves when a poll has looked and is about to park. */
function watchParking(store: Store): { store: Store; parked: () => Promise<void> } {
  let onLooked: (() => void) | null = null;
  const watched = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== "nextAvailableTaskMs" || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const next = await value.apply(target, args);
        onLooked?.();
        return next;
      };
    },
  });
  return { store: watched, parked: () => new Promise<void>((resolve) => (onLooked = resolve)) };
}

/** The engine of the worker protocol over `store`, with workflow W@1.0.0 registered. */
async function engine(store: Store, clock: ManualClock, wakeOnQueued = false) {
  const workflows = new Workflows({ store, clock });
  const wakeups = new TaskWakeups(clock);
  const executions = new Executions({
    store,
    clock,
    workflows,
    ...(wakeOnQueued ? { onTaskQueued: () => wakeups.wake() } : {}),
  });
  const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups });
  await workflows.register({ name: "W", version: "1.0.0" });
  return { workflows, wakeups, executions, tasks };
}

/** The poll's answer if it comes within half a second of wall time, else "still waiting" (then it is ended). */
async function withinMoments(poll: Promise<TaskJson[]>, clock: ManualClock): Promise<TaskJson[] | "still waiting"> {
  const got = await Promise.race([
    poll,
    new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), 500)),
  ]);
  if (got === "still waiting") {
    clock.advance(20_000);
    await poll;
  }
  return got;
}

describeEachDialect("hand-off to a parked poll", (dialect) => {
  const db = useStore(dialect);

  it("leases what a fire committed to the parked poll between the fire's batches, once", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { store, parked } = watchParking(db.store);
    const { wakeups, executions, tasks } = await engine(store, clock);

    const looked = parked();
    const poll = tasks.poll({ worker_id: "w", workflows: offer, max_tasks: 10, wait_ms: 60_000 });
    await looked;
    // The firing loop mid-herd: it reserves SQLite's connection and fires in urgent transactions.
    const release = store.prioritize?.() ?? (() => undefined);
    let queuedEarlier: Promise<unknown> = Promise.resolve();
    try {
      queuedEarlier = store.getExecution("a");
      await store.transaction(
        async (tx) => {
          for (const id of ["a", "b", "c"]) await executions.start({ executionId: id, workflow: "W", input: {} }, tx);
        },
        { urgent: true },
      );
      wakeups.wake(); // what onFire does after the batch's commit
      // The loop's next batch comes after a turn of the event loop (it yields to timers and I/O).
      await new Promise((resolve) => setImmediate(resolve));
      const nextBatch = await store.transaction(async (tx) => tx.getTaskForExecution("a"), { urgent: true });
      // SQLite's urgent lane; PostgreSQL has no lanes (each transaction has its own connection).
      if (dialect.name === "sqlite") expect(nextBatch?.state, "leased before the loop's next batch").toBe("leased");
    } finally {
      release();
    }
    const handed = await poll;
    await queuedEarlier;
    expect(handed.map((t) => t.execution_id).sort()).toEqual(["a", "b", "c"]);
    for (const t of handed) {
      const started = (await store.listEvents(t.execution_id)).filter((e) => e.type === "WorkflowTaskStarted");
      expect(started.map((e) => e.data.worker_id)).toEqual(["w"]);
    }
    expect(await tasks.claim({ worker_id: "w2", workflows: offer, max_tasks: 10 })).toEqual([]);
  });
});

describeEachDialect("a back-off that ends while a poll looks", (dialect) => {
  const db = useStore(dialect);

  it("is claimed within moments, not at the poll's timeout", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let advanceAfterNextTransaction = 0;
    const looked = { resolve: null as (() => void) | null };
    const store = new Proxy(db.store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        if (key === "transaction") {
          return async (...args: unknown[]) => {
            const result = await value.apply(target, args);
            // The back-off ends right after the claim's transaction looked (before the poll reads now).
            if (advanceAfterNextTransaction > 0) clock.advance(advanceAfterNextTransaction);
            advanceAfterNextTransaction = 0;
            return result;
          };
        }
        if (key === "nextAvailableTaskMs") {
          return async (...args: unknown[]) => {
            const next = await value.apply(target, args);
            looked.resolve?.();
            return next;
          };
        }
        return value.bind(target);
      },
    }) as Store;
    const { executions, tasks } = await engine(store, clock);
    await executions.start({ executionId: "r", workflow: "W", input: {} });
    const [first] = await tasks.claim({ worker_id: "w", workflows: offer, max_tasks: 1 });
    // Attempt 1 fails: attempt 2 waits out a back-off of 1 s.
    await tasks.fail(first!.task_id, { workerId: "w", attempt: 1, identity: null }, { message: "boom" }, true);
    // The worker is known (a poll that found nothing), so the next poll's first transaction is its claim.
    expect(await tasks.poll({ worker_id: "w", workflows: offer, max_tasks: 1, wait_ms: 0 })).toEqual([]);

    advanceAfterNextTransaction = 1_500;
    const parked = new Promise<void>((resolve) => (looked.resolve = resolve));
    const poll = tasks.poll({ worker_id: "w", workflows: offer, max_tasks: 1, wait_ms: 20_000 });
    await parked;
    looked.resolve = null;
    // A moment later, not at the poll's timeout 18.5 s on.
    for (let i = 0; i < 5 && clock.pendingSleeps === 0; i++) await new Promise((r) => setImmediate(r));
    clock.advance(50);
    const got = await withinMoments(poll, clock);
    expect(got === "still waiting" ? got : got.map((t) => [t.execution_id, t.attempt])).toEqual([["r", 2]]);
  });
});

describeEachDialect("a cancel of a run waiting out a back-off", (dialect) => {
  const db = useStore(dialect);

  it("wakes the parked poll, which takes the task to compensate at once", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { store, parked } = watchParking(db.store);
    const { executions, tasks } = await engine(store, clock, true);
    await executions.start({ executionId: "c", workflow: "W", input: {} });
    const [first] = await tasks.claim({ worker_id: "w", workflows: offer, max_tasks: 1 });
    await tasks.fail(first!.task_id, { workerId: "w", attempt: 1, identity: null }, { message: "boom" }, true);

    const looked = parked();
    const poll = tasks.poll({ worker_id: "w", workflows: offer, max_tasks: 1, wait_ms: 20_000 });
    await looked;
    // The back-off has a second to run (the clock stands still): the cancel cuts it short.
    await executions.cancel("c", { reason: "stop" });
    const got = await withinMoments(poll, clock);
    expect(got === "still waiting" ? got : got.map((t) => [t.execution_id, t.cancel_requested])).toEqual([
      ["c", "stop"],
    ]);
  });
});
