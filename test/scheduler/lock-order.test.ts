/**
 * The one lock order of docs/storage.md § Locking, on PostgreSQL: schedule rows, then execution
 * rows, then task rows. An execution that ended used to lock its execution and then its schedule
 * (the outcome, the buffers it wakes), while a fire of a `cancel_previous` schedule locks the
 * schedule and then the execution it cancels: the two deadlocked, and the PATCHes and triggers
 * queued on the schedule row were aborted with them (503, "deadlock detected": 56 of 300 PATCHes
 * and 11 of 300 triggers in bursts beside a real worker). Each end here is held, by a gate in its
 * own transaction, right after it has locked the execution, while a fire, a PATCH and a trigger
 * contend. SQLite runs one transaction at a time, so it has no such order. Also: a fire waiting
 * behind a table lock says so in the log (it stalled in silence).
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import type { Store, StoreOps } from "../../src/store/store.js";
import { PG_URL, postgresDialect, type TestLocation } from "../helpers/db.js";
import { type Harness, makeHarness, ORDER_INPUT } from "./harness.js";

/**
 * Holds the first transaction that locks `executionId` (a read `FOR UPDATE`, or the batched
 * complete's lock of its task) right after the lock, until {@link release}: `held` resolves then.
 */
class LockGate {
  executionId: string | null = null;
  taskId: string | null = null;
  readonly held: Promise<void>;
  private markHeld!: () => void;
  private open!: () => void;
  private readonly opened = new Promise<void>((resolve) => {
    this.open = resolve;
  });

  constructor() {
    this.held = new Promise((resolve) => {
      this.markHeld = resolve;
    });
  }

  release(): void {
    this.open();
  }

  /** Called after each locking read of a transaction: the first that takes the armed rows waits. */
  async passed(method: PropertyKey, args: unknown[]): Promise<void> {
    const lock = args[1] as { forUpdate?: boolean } | undefined;
    const hit =
      (method === "getExecution" && this.executionId !== null && args[0] === this.executionId && lock?.forUpdate) ||
      (method === "lockTasksAndExecutions" && this.taskId !== null && (args[0] as string[]).includes(this.taskId));
    if (!hit) return;
    this.executionId = null;
    this.taskId = null;
    this.markHeld();
    await this.opened;
  }
}

/** `store` whose transactions hand out operations that pass through `gate` after each lock. */
function gatedStore(store: Store, gate: LockGate): Store {
  const gated = (tx: StoreOps): StoreOps =>
    new Proxy(tx, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop !== "getExecution" && prop !== "lockTasksAndExecutions") return value.bind(target);
        return async (...args: unknown[]) => {
          const out: unknown = await value.apply(target, args);
          await gate.passed(prop, args);
          return out;
        };
      },
    });
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop === "transaction") {
        return (fn: (tx: StoreOps) => Promise<unknown>, ...rest: unknown[]) =>
          (target.transaction as (...a: unknown[]) => Promise<unknown>)((tx: StoreOps) => fn(gated(tx)), ...rest);
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

if (!postgresDialect.enabled) console.warn(`skipped: "lock order [postgres]": ${postgresDialect.skipReason}`);

describe.skipIf(!postgresDialect.enabled)("lock order [postgres]", () => {
  let location: TestLocation;
  let store: Store;
  let admin: pg.Client;

  beforeEach(async () => {
    location = await postgresDialect.createLocation();
    store = await location.open();
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });
  afterEach(async () => {
    await admin.end();
    await location.destroy();
  });

  it("says so while a fire waits behind a lock held on the schedules table, and fires once it goes", async () => {
    const warnings: string[] = [];
    const log = { warn: (_: object, msg: string) => void warnings.push(msg), error: () => undefined };
    const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", log, stallWarnMs: 50 });
    await h.scheduler.schedules.create({
      schedule_id: "held",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "1m",
    });
    const schema = location.env.ORBIT_TEST_PG_SCHEMA;
    await admin.query("BEGIN");
    await admin.query(`LOCK TABLE ${schema}.orbit_schedules IN ACCESS EXCLUSIVE MODE`);
    const fired = h.fireAt("2026-11-15T00:01:00Z");
    await waitersAtLeast(1);
    // Waits on events: the warning comes while the fire still waits.
    while (warnings.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings[0]).toMatch(/^a fire batch is still waiting for the database: a lock held on an Orbit table/);
    await admin.query("ROLLBACK");
    expect(await fired).toBe(1);
  });

  /**
   * Resolves once at least `n` backends of this test's schema wait for a lock (an event, polled),
   * or once `stop()` is true.
   */
  async function waitersAtLeast(n: number, stop: () => boolean = () => false): Promise<void> {
    const schema = location.env.ORBIT_TEST_PG_SCHEMA;
    while (!stop()) {
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity a
          WHERE a.wait_event_type = 'Lock' AND EXISTS (
            SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
              JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE l.pid = a.pid AND n.nspname = $1)`,
        [schema],
      );
      if (rows[0].n >= n) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  const offer = [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 1, backoff_ms: 1000 }];
  const holder = { workerId: "w1", identity: null };
  const PREVIOUS = "cp:2026-11-15T00:01:00Z";

  /**
   * Each way an execution ends, run on the harness; `leased`: its task is leased to `holder` first
   * (a cancel of a leased task only asks the worker; unleased, it ends the execution at once).
   */
  const ends: Record<
    string,
    { leased: boolean; run: (h: Harness, tasks: WorkerTasks, taskId: string) => Promise<unknown> }
  > = {
    "a worker's complete report": { leased: true, run: (_h, t, id) => t.complete(id, holder, { ok: true }) },
    "a worker's batched complete": {
      leased: true,
      run: (_h, t, id) => t.completeMany(holder, [{ task_id: id, result: 1 }]),
    },
    "a worker's failure report": { leased: true, run: (_h, t, id) => t.fail(id, holder, { message: "boom" }, false) },
    "a cancel through the API": { leased: false, run: (h) => h.executions.cancel(PREVIOUS, { reason: "stop" }) },
    "a complete through the API": { leased: false, run: (h) => h.executions.complete(PREVIOUS, { ok: true }) },
  };

  for (const [name, end] of Object.entries(ends)) {
    it(`${name} of a cancel_previous schedule's execution, held while a fire, a PATCH and a trigger contend: no deadlock, all commit`, async () => {
      const gate = new LockGate();
      const logged: string[] = [];
      const log = {
        warn: (_: object, msg: string) => void logged.push(msg),
        error: (_: object, msg: string) => void logged.push(msg),
      };
      const gated = gatedStore(store, gate);
      const h = await makeHarness(gated, { now: "2026-11-15T00:00:30Z", log });
      const wakeups = new TaskWakeups(h.clock);
      const tasks = new WorkerTasks({
        store: gated,
        clock: h.clock,
        executions: h.executions,
        workflows: h.workflows,
        wakeups,
      });
      await h.scheduler.schedules.create({
        schedule_id: "cp",
        workflow: "OrderProcessing",
        input: ORDER_INPUT,
        interval: "1m",
        overlap: "cancel_previous",
      });
      expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(1);
      const taskId = (await store.getTaskForExecution(PREVIOUS))!.taskId;
      if (end.leased) await tasks.claim({ worker_id: holder.workerId, workflows: offer, max_tasks: 1 });

      // The end takes its locks up to the execution's (the schedule row first, since the fix) and
      // stops there.
      gate.executionId = PREVIOUS;
      gate.taskId = taskId;
      const ending = end.run(h, tasks, taskId);
      await Promise.race([gate.held, ending.then(() => Promise.reject(new Error("the end passed no gate")))]);
      // The next occurrence is due: the fire either skips the held schedule row (FOR UPDATE SKIP
      // LOCKED) and is done, or holds it and waits to cancel the execution.
      h.clock.set(Date.parse("2026-11-15T00:02:00Z"));
      let fireDone = false;
      const fire = h.scheduler.loop.fireDue().finally(() => {
        fireDone = true;
      });
      await waitersAtLeast(1, () => fireDone);
      const fireWaits = !fireDone;
      const patch = h.scheduler.schedules.update("cp", { description: "patched" });
      const trigger = h.scheduler.actions.trigger("cp", {});
      // Both queue behind the end or the fire, as the PATCHes and triggers of the burst did.
      await waitersAtLeast(fireWaits ? 3 : 2);
      gate.release();

      const settled = await Promise.allSettled([ending, fire, patch, trigger]);
      const failures = settled.flatMap((r) => (r.status === "rejected" ? [String((r.reason as Error).message)] : []));
      expect(failures).toEqual([]);
      // A fire aborted to break a deadlock is fired again on its own, and says so.
      expect(logged).toEqual([]);
      const started = settled[3].status === "fulfilled" && (settled[3].value as { started: boolean }).started;
      expect(started).toBe(true);
      // What the fire skipped while the end held the row, it fires now.
      await h.scheduler.loop.fireDue();
      const row = await store.getSchedule("cp");
      expect(row?.spec.description).toBe("patched");
      expect(row?.nextFireMs).toBe(Date.parse("2026-11-15T00:03:00Z"));
      expect((await store.getExecution(PREVIOUS))?.status).not.toBe("RUNNING");
      expect(await store.getExecution("cp:2026-11-15T00:02:00Z")).not.toBeNull();
    });
  }

  it("an end locks its schedule and the schedules of its concurrency key with a buffer to wake, in one statement", async () => {
    const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z" });
    const create = (id: string, extra: Record<string, unknown>) =>
      h.scheduler.schedules.create({
        schedule_id: id,
        workflow: "OrderProcessing",
        input: ORDER_INPUT,
        interval: "1m",
        ...extra,
      });
    await create("a", { concurrency_key: "k", overlap: "buffer_one" });
    await create("b", { concurrency_key: "k", overlap: "buffer_one" });
    await create("c", { concurrency_key: "k", overlap: "buffer_one" });
    await create("other", {});
    await h.fireAt("2026-11-15T00:01:00Z");
    const running = "a:2026-11-15T00:01:00Z";
    // b waits for a's execution in its buffer; c does not wait (paused).
    expect((await store.getSchedule("b"))?.buffered).toHaveLength(1);
    await h.scheduler.actions.pause("c", {});
    const schema = location.env.ORBIT_TEST_PG_SCHEMA;
    const locked = async (id: string): Promise<boolean> => {
      await admin.query("BEGIN");
      try {
        const { rows } = await admin.query(
          `SELECT schedule_id FROM ${schema}.orbit_schedules WHERE schedule_id = $1 FOR UPDATE SKIP LOCKED`,
          [id],
        );
        return rows.length === 0;
      } finally {
        await admin.query("ROLLBACK");
      }
    };
    let seen: Record<string, boolean> = {};
    await store.transaction(async (tx) => {
      await tx.lockSchedulesForEnd({ executionIds: [running] });
      for (const id of ["a", "b", "c", "other"]) seen[id] = await locked(id);
    });
    expect(seen).toEqual({ a: true, b: true, c: false, other: false });
    seen = {};
    const task = await store.getTaskForExecution(running);
    await store.transaction(async (tx) => {
      await tx.lockSchedulesForEnd({ taskIds: [task!.taskId] });
      for (const id of ["a", "b", "c", "other"]) seen[id] = await locked(id);
    });
    expect(seen).toEqual({ a: true, b: true, c: false, other: false });
  });
});
