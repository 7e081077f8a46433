/**
 * A lease runs out when its worker goes silent, not when the server could not hear it
 * (docs/workflows.md § Leases): the reaper's first pass after the server starts, and its first pass
 * after a worker request was answered 503 (the database away), extend every lapsed lease to a full
 * lease instead of reaping it, so the live worker's report, sent again once the server is back,
 * lands. Before, an outage longer than the lease made the worker's finished run run again as
 * attempt 2. Both dialects.
 */
import { expect, it } from "vitest";
import { reportedTasks } from "../../src/api/worker-routes.js";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { isOutage, OrbitError } from "../../src/domain/errors.js";
import { TaskReaper } from "../../src/engine/task-reaper.js";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];
const LEASE_MS = 30_000;

/** A server's task engine on `store` with a manual clock, and one leased task of execution "e". */
async function leased(store: Store) {
  const { clock, executions, tasks } = await engineAt(store, Date.UTC(2026, 0, 1), "W");
  expect(tasks.leaseMs).toBe(LEASE_MS);
  await executions.start({ executionId: "e", workflow: "W", input: {} });
  const [task] = await tasks.claim({ worker_id: "w1", workflows: offer, max_tasks: 1 });
  return { clock, tasks, executions, taskId: task!.task_id, leasedAt: clock.now() };
}

/** `seconds` seconds of both clocks, the reaper passing at each; returns how many tasks it put back. */
async function secondsOfSilence(seconds: number, clock: ManualClock, tick: () => void, reaper: TaskReaper) {
  let requeued = 0;
  for (let i = 0; i < seconds; i++) {
    tick();
    clock.advance(1000);
    requeued += await reaper.reapExpired();
  }
  return requeued;
}

/**
 * `store` whose reads of expired leases take `faults.stall` ms of `clock` (a stalled database), and
 * whose next `faults.aborts` lease extensions PostgreSQL aborts as deadlock victims.
 */
function stallingStore(store: Store, clock: ManualClock) {
  const faults = { stall: 0, aborts: 0 };
  const stalling = new Proxy(store, {
    get(target, key) {
      if (key === "listExpiredLeases") {
        return async (...args: Parameters<Store["listExpiredLeases"]>) => {
          clock.advance(faults.stall);
          return target.listExpiredLeases(...args);
        };
      }
      if (key === "extendLapsedLeases" && faults.aborts > 0) {
        faults.aborts--;
        return async () => {
          throw new OrbitError("UNAVAILABLE", "the database aborted the transaction (deadlock detected)", {
            aborted: true,
          });
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
  return { store: stalling, faults };
}

describeEachDialect("leases through the server's own outage", (dialect) => {
  const db = useStore(dialect);

  it("a report being handled when its lease runs out keeps the task from the reaper, and lands", async () => {
    const store = db.store;
    const { clock, tasks, executions, taskId, leasedAt } = await leased(store);
    const reaper = new TaskReaper({ store, clock, tasks, outages: { count: 0 } });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace, with nothing lapsed yet
    // The worker reports 20 s into its lease; the database holds the report (a table lock) past its end.
    const heardMs = leasedAt + 20_000;
    const report = tasks.whileReporting([taskId], async () => {
      clock.set(leasedAt + LEASE_MS + 500);
      // The reaper, woken at the lease's end, leaves the task to the report in hand (it took it, and
      // the finished run ran again as attempt 2, when the lock went: a tester's report).
      expect(await reaper.reapExpired()).toBe(0);
      return tasks.completeMany({ workerId: "w1", identity: null, heardMs }, [
        { task_id: taskId, attempt: 1, result: { done: true } },
      ]);
    });
    expect((await report)[taskId]).toEqual({ status: "COMPLETED" });
    expect((await executions.get("e")).status).toBe("COMPLETED");
    expect(tasks.isReporting(taskId)).toBe(false);
  });

  it("a lapsed lease with no report in hand is reaped as before", async () => {
    const store = db.store;
    const { clock, tasks, taskId, leasedAt } = await leased(store);
    const reaper = new TaskReaper({ store, clock, tasks, outages: { count: 0 } });
    expect(await reaper.reapExpired()).toBe(0);
    // A report on another task does not keep this one.
    await tasks.whileReporting(["other"], async () => {
      clock.set(leasedAt + LEASE_MS + 500);
      expect(await reaper.reapExpired()).toBe(1);
    });
    expect((await store.getTaskForExecution("e"))?.attempt).toBe(2);
    expect(taskId).not.toBe("other");
  });

  it("a started server, then one that answered 503, extends lapsed leases once; a silent worker's is reaped after", async () => {
    const store = db.store;
    const { clock, tasks, executions, taskId, leasedAt } = await leased(store);
    const task = { task_id: taskId };
    const lease = async () => (await store.getTaskForExecution("e"))?.leaseUntilMs;

    // The server was down longer than the lease; it starts again: the first pass gives a grace.
    clock.advance(LEASE_MS + 40_000);
    const outages = { count: 0 };
    // The line says which cause applied (it listed every possible one, whatever happened).
    const said: unknown[] = [];
    const log = { error: () => undefined, warn: (fields: object) => void said.push(fields) };
    const reaper = new TaskReaper({ store, clock, tasks, outages, log });
    expect(await reaper.reapExpired()).toBe(0);
    expect(await lease()).toBe(clock.now() + LEASE_MS);
    // The worker's report, sent again, lands: its run is not run a second time.
    clock.advance(10_000);
    const answers = await tasks.completeMany({ workerId: "w1", identity: null }, [
      { task_id: task!.task_id, attempt: 1, result: { done: true } },
    ]);
    expect(answers[task!.task_id]).toEqual({ status: "COMPLETED" });
    expect(await store.getExecution("e")).toMatchObject({ status: "COMPLETED", attempt: 1 });
    expect(leasedAt).toBeLessThan(clock.now());

    // Another task, its worker silent: a 503 meanwhile gives one grace, then it is reaped.
    await executions.start({ executionId: "f", workflow: "W", input: {} });
    await tasks.claim({ worker_id: "w2", workflows: offer, max_tasks: 1 });
    clock.advance(LEASE_MS + 1);
    outages.count++;
    clock.advance(1);
    expect(await reaper.reapExpired()).toBe(0);
    expect(await reaper.reapExpired()).toBe(0); // still within the grace
    clock.advance(LEASE_MS + 1);
    expect(await reaper.reapExpired()).toBe(1);
    expect((await store.getTaskForExecution("f"))?.attempt).toBe(2);
    expect(said).toEqual([
      { extended: 1, because: "it started" },
      {
        extended: 1,
        because:
          "its database was away: a statement or a new connection to it failed, or a worker request was answered 503",
      },
    ]);
  });

  it("a server no worker talks to, whose own operations met the database away, extends the lapsed leases once", async () => {
    // In a cluster only the server a worker talks to answers it 503: another server's first pass
    // after a 40 s outage took the live worker's leases, and its finished runs ran again (a tester).
    const { clock, tasks } = await leased(db.store);
    const met = { outages: 0 };
    const store = new Proxy(db.store, {
      get(target, key) {
        if (key === "outageCount") return () => met.outages;
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    const reaper = new TaskReaper({ store, clock, tasks, outages: { count: 0 } });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace, nothing lapsed yet
    clock.advance(LEASE_MS + 10_000); // the outage: the worker's heartbeats reached no server
    met.outages += 3; // this server's own reads failed meanwhile
    expect(await reaper.reapExpired()).toBe(0);
    expect((await db.store.getTaskForExecution("e"))?.leaseUntilMs).toBe(clock.now() + LEASE_MS);
    clock.advance(LEASE_MS + 1); // nothing heard through the grace: the worker is gone
    expect(await reaper.reapExpired()).toBe(1);
  });

  it("a 503 at least once a lease does not keep a silent worker's lease: a lease graced once is reaped unless heard since", async () => {
    // Every 503 extended every lease again: connections dropped every few seconds kept a killed
    // worker's tasks leased for as long as the drops went on (reaped 174 s after the kill).
    const store = db.store;
    const { clock, tasks, executions } = await leased(store);
    const outages = { count: 0 };
    const reaper = new TaskReaper({ store, clock, tasks, outages });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace
    // A second task whose worker heartbeats all along, beside the first, whose worker was killed.
    await executions.start({ executionId: "live", workflow: "W", input: {} });
    const [live] = await tasks.claim({ worker_id: "w-live", workflows: offer, max_tasks: 1 });
    const holder = { workerId: "w-live", identity: null };
    let reaped = 0;
    for (let s = 0; s < 150; s += 5) {
      clock.advance(5_000);
      outages.count++; // a worker request answered 503 every 5 s
      if (s % 10 === 0) await tasks.heartbeat(holder, [live!.task_id]);
      reaped += await reaper.reapExpired();
    }
    expect(reaped).toBe(1);
    expect(await store.getTaskForExecution("e")).toMatchObject({ attempt: 2 });
    expect(await store.getTaskForExecution("live")).toMatchObject({ attempt: 1, state: "leased" });
  });

  it("a worker whose heartbeats reach the server but are answered 503 for longer than a lease keeps it; a silent one's is reaped", async () => {
    // A full disk for 110 s: every heartbeat failed to be written, a few other writes landed, and a
    // grace passed over the live worker's leases as unheard: 87 finished runs ran again (a tester).
    const store = db.store;
    const { clock, tasks, executions } = await leased(store);
    const outages = { count: 0 };
    const reaper = new TaskReaper({ store, clock, tasks, outages });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace
    await executions.start({ executionId: "live", workflow: "W", input: {} });
    const [live] = await tasks.claim({ worker_id: "w-live", workflows: offer, max_tasks: 1 });
    let reaped = 0;
    for (let s = 0; s < 150; s += 5) {
      clock.advance(5_000);
      // The live worker's heartbeat, answered 503 as the worker route does (worker-routes.ts).
      outages.count++;
      reaper.heardWhileAway([live!.task_id], clock.now());
      reaped += await reaper.reapExpired();
    }
    expect(reaped).toBe(1);
    expect(await store.getTaskForExecution("e")).toMatchObject({ attempt: 2 });
    expect(await store.getTaskForExecution("live")).toMatchObject({ attempt: 1, state: "leased" });
    // Once its heartbeats are no longer heard, it is reaped as any silent worker's.
    for (let s = 0; s < 70; s += 5) {
      clock.advance(5_000);
      outages.count++;
      reaped += await reaper.reapExpired();
    }
    expect(await store.getTaskForExecution("live")).toMatchObject({ attempt: 2 });
  });

  it("a heartbeat and a report the worker sent inside its lease, held up by the database past it, find the lease", async () => {
    const { clock, tasks, taskId, leasedAt } = await leased(db.store);
    // Heard 1 s before the lease's end; the database answered 20 s after it.
    const heardMs = leasedAt + LEASE_MS - 1000;
    clock.set(leasedAt + LEASE_MS + 20_000);
    const beat = await tasks.heartbeat({ workerId: "w1", identity: null, heardMs }, [taskId]);
    expect(beat.tasks[taskId]?.lease).toBe("held");
    // Renewed for a full lease from when the server got to it, not from when it was heard.
    expect((await db.store.getTaskForExecution("e"))?.leaseUntilMs).toBe(clock.now() + LEASE_MS);
    // A report heard after the lease's end is still refused (a worker that went silent past it).
    clock.advance(LEASE_MS + 1);
    const late = { workerId: "w1", identity: null, attempt: 1, heardMs: clock.now() };
    await expect(
      tasks.step(taskId, late, { worker_id: "w1", step: "s", seq: 1, result: 1, compensable: false }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const inTime = { workerId: "w1", identity: null, attempt: 1, heardMs: clock.now() - 2 };
    const answers = await tasks.completeMany(inTime, [{ task_id: taskId, attempt: 1, result: null }]);
    expect(answers[taskId]).toEqual({ status: "COMPLETED" });
  });

  it("the reaper woken during a database stall extends the lapsed leases instead of handing them back", async () => {
    const { clock, tasks, leasedAt } = await leased(db.store);
    // The database does not answer for 20 s (a network stall): the reaper's read returns after it.
    // (A database that answers at once reaps a silent worker's lease a lease later: the test above.)
    const { store: stalling, faults } = stallingStore(db.store, clock);
    const reaper = new TaskReaper({ store: stalling, clock, tasks });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace
    clock.set(leasedAt + LEASE_MS + 1);
    faults.stall = 20_000;
    expect(await reaper.reapExpired()).toBe(0);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 1, leaseUntilMs: clock.now() + LEASE_MS });
    // A database slow at every read gives that grace once: the next slow read reaps a lapsed lease.
    clock.advance(LEASE_MS + 1);
    expect(await reaper.reapExpired()).toBe(1);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 2 });
  });

  it("a stall's grace whose extension PostgreSQL aborted is given at the next pass, not dropped", async () => {
    const { clock, tasks, leasedAt } = await leased(db.store);
    const { store: stalling, faults } = stallingStore(db.store, clock);
    const reaper = new TaskReaper({ store: stalling, clock, tasks });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace
    clock.set(leasedAt + LEASE_MS + 1);
    faults.stall = 20_000;
    faults.aborts = 1;
    await expect(reaper.reapExpired()).rejects.toMatchObject({ code: "UNAVAILABLE" });
    // The database answers at once again: the grace is still owed (the pass reaped the lease: a tester).
    faults.stall = 0;
    expect(await reaper.reapExpired()).toBe(0);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 1, leaseUntilMs: clock.now() + LEASE_MS });
  });

  it("a server paused longer than a heartbeat interval (SIGSTOP) extends the lapsed leases once, then reaps", async () => {
    const { clock, tasks, leasedAt } = await leased(db.store);
    let steady = 0;
    const reaper = new TaskReaper({ store: db.store, clock, tasks, steadyMs: () => steady });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace
    // Stopped 45 s (the worker heartbeating all along, unheard); the lease lapsed meanwhile.
    steady += 1000;
    clock.set(leasedAt + LEASE_MS + 45_000);
    steady += 45_000;
    expect(await reaper.reapExpired()).toBe(0);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 1, leaseUntilMs: clock.now() + LEASE_MS });
    // Not paused again: the lease that lapses now is a silent worker's.
    await secondsOfSilence(31, clock, () => (steady += 1000), reaper);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 2 });
  });

  it("a single server's wall clock stepped forward extends the leases it made lapse, once, then reaps", async () => {
    // The worker heartbeats all along; the host's clock jumps 40 s in a second (an NTP step): the
    // lease looked lapsed by the step, and its step ran again as attempt 2 (a tester's faketime).
    const { clock, tasks } = await leased(db.store);
    let steady = 0;
    const reaper = new TaskReaper({ store: db.store, clock, tasks, steadyMs: () => steady, wallSteps: true });
    expect(await reaper.reapExpired()).toBe(0); // the start's grace
    expect(await secondsOfSilence(LEASE_MS / 1000 - 2, clock, () => (steady += 1000), reaper)).toBe(0);
    clock.advance(40_000);
    steady += 1000;
    expect(await reaper.reapExpired()).toBe(0);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 1, leaseUntilMs: clock.now() + LEASE_MS });
    // Unheard since: the lease that lapses now is a silent worker's.
    await secondsOfSilence(31, clock, () => (steady += 1000), reaper);
    expect(await db.store.getTaskForExecution("e")).toMatchObject({ attempt: 2 });
  });
});

it("a transaction PostgreSQL aborted (a deadlock) is not an outage: it owes the leases no grace", () => {
  expect(isOutage(new OrbitError("UNAVAILABLE", "the database is unavailable (ECONNREFUSED); retry shortly"))).toBe(
    true,
  );
  expect(
    isOutage(
      new OrbitError("UNAVAILABLE", "the database aborted the transaction (deadlock detected); retry", {
        aborted: true,
      }),
    ),
  ).toBe(false);
  expect(isOutage(new OrbitError("CONFLICT", "lease lost"))).toBe(false);
  expect(isOutage(new Error("boom"))).toBe(false);
});

it("a worker request's reported tasks are its path's, its list's or its batch's (the reaper leaves those)", () => {
  expect(reportedTasks("t1", { worker_id: "w" })).toEqual(["t1"]);
  expect(reportedTasks("", { worker_id: "w", task_ids: ["a", "b"] })).toEqual(["a", "b"]);
  expect(reportedTasks("", { worker_id: "w", tasks: [{ task_id: "a", result: null }, { task_id: "b" }] })).toEqual([
    "a",
    "b",
  ]);
  expect(reportedTasks("", { worker_id: "w", workflows: [] })).toEqual([]);
});
