/**
 * The hand-off at start (src/engine/task-hand-off.ts, docs/workflows.md § Hand-off at start): a
 * transaction that starts executions leases their new tasks to parked polls itself, and the polls
 * are answered only after its COMMIT. No wake-up is wired here (no `onTaskQueued`), so a poll that
 * gets a task got it from the hand-off.
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { WorkflowOfferJson } from "../../src/domain/worker-protocol.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskHandOff } from "../../src/engine/task-hand-off.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { StoreOps } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const W: WorkflowOfferJson = { name: "W", version: "1.0.0", max_attempts: 4, backoff_ms: 250 };
const OTHER: WorkflowOfferJson = { name: "Other", version: "1.0.0", max_attempts: 1, backoff_ms: 1000 };

describeEachDialect("hand-off at start", (dialect) => {
  const db = useStore(dialect);

  async function setUp() {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const store = db.store;
    const workflows = new Workflows({ store, clock });
    const handOff = new TaskHandOff();
    let woken = 0;
    const executions = new Executions({ store, clock, workflows, handOff, onTaskQueued: () => woken++ });
    const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock), handOff });
    await workflows.register({ name: "W", version: "1.0.0" });
    await workflows.register({ name: "Other", version: "1.0.0" });
    /** A long poll, resolved once it has parked. */
    const parkedPoll = async (workerId: string, offers: WorkflowOfferJson[], maxTasks: number, waitMs = 60_000) => {
      const before = handOff.waiting;
      const poll = tasks.poll({ worker_id: workerId, workflows: offers, max_tasks: maxTasks, wait_ms: waitMs });
      await until(() => handOff.waiting > before);
      return { answer: poll };
    };
    /** Starts `ids` one after the other, in `tx` when given. */
    const start = async (ids: string[], tx?: StoreOps, workflow = "W") => {
      for (const id of ids) await executions.start({ executionId: id, workflow, input: {} }, tx);
    };
    return { clock, store, handOff, tasks, parkedPoll, start, woken: () => woken };
  }

  it("leases a start's tasks to the parked poll in the start's transaction and answers after its commit", async () => {
    const { store, clock, parkedPoll, handOff, woken, start } = await setUp();
    const parked = (await parkedPoll("w", [W], 10)).answer;
    let answered = false;
    void parked.then(() => (answered = true));
    await store.transaction(async (tx) => {
      await start(["a", "b", "c"], tx);
      // Leased inside the transaction; the poll is not answered before the commit.
      const lease = await tx.getTaskForExecution("a");
      expect(lease).toMatchObject({ state: "leased", leaseOwner: "w" });
      await new Promise((resolve) => setImmediate(resolve));
      expect(answered, "answered before the commit").toBe(false);
    });
    const handed = await parked;
    expect(handed.map((t) => t.execution_id).sort()).toEqual(["a", "b", "c"]);
    expect(handed.every((t) => t.attempt === 1 && t.run === 1 && t.status === "RUNNING")).toBe(true);
    expect(handOff.waiting).toBe(0);
    expect(woken(), "every task was handed: nothing to wake polls for").toBe(0);
    for (const t of handed) {
      const lease = await store.getTaskLease(t.task_id);
      expect(lease).toMatchObject({
        state: "leased",
        leaseOwner: "w",
        leaseUntilMs: clock.now() + 30_000,
        maxAttempts: 4,
        backoffMs: 250,
      });
      const types = (await store.listEvents(t.execution_id)).map((e) => [e.type, e.data.worker_id ?? null]);
      expect(types).toEqual([
        ["WorkflowCreated", null],
        ["WorkflowTaskStarted", "w"],
      ]);
    }
  });

  it("hands each poll at most its room, oldest poll first, only the workflows it offers; the rest stay pending", async () => {
    const { store, tasks, parkedPoll, woken, start } = await setUp();
    const other = (await parkedPoll("w-other", [OTHER], 10)).answer;
    const first = (await parkedPoll("w1", [W], 2)).answer;
    const second = (await parkedPoll("w2", [W], 2)).answer;
    await store.transaction(async (tx) => {
      await start(["a", "b", "c", "d", "e"], tx);
    });
    expect((await first).map((t) => t.execution_id)).toEqual(["a", "b"]);
    expect((await second).map((t) => t.execution_id)).toEqual(["c", "d"]);
    expect(woken(), "e is left pending: polls are woken for it").toBeGreaterThan(0);
    const rest = await tasks.claim({ worker_id: "w3", workflows: [W], max_tasks: 10 });
    expect(rest.map((t) => t.execution_id)).toEqual(["e"]);
    // The poll of another workflow is still parked; a start of its workflow is handed to it.
    await start(["x"], undefined, "Other");
    expect((await other).map((t) => t.execution_id)).toEqual(["x"]);
  });

  it("answers nothing from a transaction that rolled back; the poll goes on waiting and takes the next start", async () => {
    const { store, parkedPoll, handOff, start } = await setUp();
    const parked = (await parkedPoll("w", [W], 10)).answer;
    await expect(
      store.transaction(async (tx) => {
        await start(["lost"], tx);
        throw new Error("the fire failed after its starts");
      }),
    ).rejects.toThrow("the fire failed");
    expect(await store.getExecution("lost")).toBeNull();
    await until(() => handOff.waiting === 1);
    await start(["kept"]);
    expect((await parked).map((t) => t.execution_id)).toEqual(["kept"]);
  });

  it("a poll whose wait ends while a transaction holds its tasks waits for that commit and returns them", async () => {
    const { store, clock, parkedPoll, start } = await setUp();
    const parked = (await parkedPoll("w", [W], 10, 5_000)).answer;
    await store.transaction(async (tx) => {
      await start(["a"], tx);
      clock.advance(10_000); // the poll's wait times out while the transaction is open
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect((await parked).map((t) => t.execution_id)).toEqual(["a"]);
    expect(await store.getTaskForExecution("a")).toMatchObject({ state: "leased", leaseOwner: "w" });
  });

  it("a poll that timed out before the start is not handed anything", async () => {
    const { store, clock, parkedPoll, tasks, start } = await setUp();
    const parked = (await parkedPoll("w", [W], 10, 5_000)).answer;
    clock.advance(10_000);
    expect(await parked).toEqual([]);
    await start(["a"]);
    expect(await store.getTaskForExecution("a")).toMatchObject({ state: "pending" });
    expect((await tasks.claim({ worker_id: "w2", workflows: [W], max_tasks: 1 })).map((t) => t.execution_id)).toEqual([
      "a",
    ]);
  });

  it("a start nested in an outer transaction (atomically) hands off nothing: its tasks stay pending and wake polls", async () => {
    const { store, clock, parkedPoll, handOff, woken, start } = await setUp();
    const parked = (await parkedPoll("w", [W], 10, 5_000)).answer;
    await store.atomically!(async () => {
      await start(["a"]);
    });
    expect(await store.getTaskForExecution("a")).toMatchObject({ state: "pending" });
    expect(woken()).toBeGreaterThan(0);
    expect(handOff.waiting).toBe(1);
    clock.advance(10_000);
    await parked;
  });
});

/** Waits until `condition` holds (a poll parks after two round trips to the database), at most 10 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
