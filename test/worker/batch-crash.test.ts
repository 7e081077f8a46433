/**
 * Kill -9 during batched leases and batched completes (WorkerTasks.claim, completeMany): reopen the
 * database and check that every batch reported committed is there whole, and that the batch that
 * was open left nothing: each execution is either COMPLETED once (its event, its task done) or still
 * RUNNING with its task leased and no completion, ready for the lease reaper to hand it out again.
 * A poll killed inside its transaction leases nothing: its tasks are pending, without an event; so
 * does a hand-off to a parked poll (woken, or at start inside the starts' transaction), and one
 * that committed but was never answered is leased once, re-leased after its expiry and completed once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { SystemClock } from "../../src/clock/system-clock.js";
import type { Clock } from "../../src/domain/clock.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { Store } from "../../src/store/store.js";
import { childArgs } from "../helpers/child.js";
import { describeEachDialect, type TestLocation } from "../helpers/db.js";

const CHILD = fileURLToPath(new URL("./fixtures/batch-crash-child.ts", import.meta.url));

interface Run {
  child: ChildProcess;
  leased: string[];
  completed: string[];
  started: string[];
  waitFor(until: (line: string) => boolean): Promise<string>;
  exited: Promise<NodeJS.Signals | null>;
}

function runChild(location: TestLocation, mode: string): Run {
  const child = spawn(process.execPath, childArgs(CHILD), {
    env: { ...process.env, ...location.env, ORBIT_CRASH_MODE: mode },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run: Run = {
    child,
    leased: [],
    completed: [],
    started: [],
    waitFor: () => Promise.resolve(""),
    exited: Promise.resolve(null),
  };
  let stderr = "";
  let buffer = "";
  const waiters: { until: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const [kind, ...ids] = line.split(" ");
      if (kind === "leased") run.leased.push(...ids);
      if (kind === "completed") run.completed.push(...ids);
      if (kind === "started") run.started.push(...ids);
      for (const w of waiters.splice(0)) {
        if (w.until(line)) w.resolve(line);
        else waiters.push(w);
      }
    }
  });
  run.exited = new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  run.waitFor = (until) =>
    new Promise((resolve, reject) => {
      waiters.push({ until, resolve });
      void run.exited.then(() => reject(new Error(`child exited before the expected output; stderr:\n${stderr}`)));
    });
  return run;
}

/** Every execution is whole: COMPLETED once with its task done, or RUNNING, leased, never completed. */
async function expectWhole(store: Store, run: Run): Promise<void> {
  const all = await store.listExecutions({ limit: 10_000 });
  const completed = new Set(run.completed);
  for (const e of all) {
    const events = (await store.listEvents(e.executionId)).map((x) => x.type);
    const task = await store.getTaskForExecution(e.executionId);
    const completions = events.filter((t) => t === "WorkflowCompleted").length;
    if (e.status === "COMPLETED") {
      expect(completions, `${e.executionId}: one completion`).toBe(1);
      expect(task?.state, `${e.executionId}: its task is done`).toBe("done");
      expect(e.result).toEqual({ ok: e.executionId });
    } else {
      expect(completed.has(e.executionId), `${e.executionId} was reported completed`).toBe(false);
      expect(e.status).toBe("RUNNING");
      expect(completions, `${e.executionId} is half-completed`).toBe(0);
      expect(task?.state).toMatch(/^(pending|leased)$/);
      if (run.leased.includes(e.executionId)) expect(task?.leaseOwner ?? "w").toBe("w");
    }
  }
  for (const id of completed) expect(all.find((e) => e.executionId === id)?.status, id).toBe("COMPLETED");
}

const OFFER = [{ name: "Crash", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];

/** The worker protocol's engine on a reopened database, as a restarted server has it. */
function engine(store: Store, clock: Clock): WorkerTasks {
  const workflows = new Workflows({ store, clock });
  const executions = new Executions({ store, clock, workflows });
  return new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
}

describeEachDialect("batched leases and completes survive kill -9", (dialect) => {
  let location: TestLocation | null = null;
  let child: ChildProcess | null = null;
  afterEach(async () => {
    child?.kill("SIGKILL");
    await location?.destroy();
    location = child = null;
  });

  /** Starts the child in `mode`, waits for its open lease of 20 tasks, kills it with SIGKILL. */
  async function killedWithOpenLease(mode: string): Promise<{ run: Run; store: Store; openTasks: string[] }> {
    location = await dialect.createLocation();
    const run = runChild(location, mode);
    child = run.child;
    const open = await run.waitFor((line) => line.startsWith("open-lease "));
    const openTasks = open.slice("open-lease ".length).split(" ");
    expect(openTasks).toHaveLength(20);
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    return { run, store: await location.open(), openTasks };
  }

  it("shows nothing of the batch whose transaction was open, and all of the batches before it", async () => {
    location = await dialect.createLocation();
    const run = runChild(location, "hang");
    child = run.child;
    const open = await run.waitFor((line) => line.startsWith("open "));
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    expect(run.completed).toHaveLength(20);
    expect(run.leased).toHaveLength(40);
    const store = await location.open();
    await expectWhole(store, run);
    // The open batch's executions, tasks and events were all written before the kill: none of it is visible.
    const openIds = open.slice("open ".length).split(" ");
    expect(openIds).toHaveLength(20);
    for (const id of openIds) {
      expect((await store.getExecution(id))?.status, id).toBe("RUNNING");
      expect((await store.getTaskForExecution(id))?.state, id).toBe("leased");
    }
    const running = (await store.listExecutions({ limit: 100 })).filter((e) => e.status === "RUNNING");
    expect(running).toHaveLength(20);
  });

  it("leases nothing of a poll killed between its lease UPDATE and its commit; the next poll leases it once", async () => {
    const { run, store, openTasks } = await killedWithOpenLease("hang-lease");
    expect(run.completed).toHaveLength(20);
    await expectWhole(store, run);
    for (const id of openTasks) {
      const task = await store.getTaskLease(id);
      expect(task?.state, `${id}: its lease was rolled back`).toBe("pending");
      expect(task?.leaseOwner ?? null).toBeNull();
      const events = (await store.listEvents(task!.executionId)).map((e) => e.type);
      expect(events, `${task!.executionId} has no WorkflowTaskStarted`).toEqual(["WorkflowCreated"]);
    }
    // A poll after the restart leases the open batch's tasks, each once.
    const tasks = engine(store, new SystemClock());
    const again = await tasks.claim({ worker_id: "w2", workflows: OFFER, max_tasks: 100 });
    expect(again.map((t) => t.task_id).sort()).toEqual([...openTasks].sort());
    expect(await tasks.claim({ worker_id: "w3", workflows: OFFER, max_tasks: 100 })).toEqual([]);
    for (const t of again) {
      const started = (await store.listEvents(t.execution_id)).filter((e) => e.type === "WorkflowTaskStarted");
      expect(started.map((e) => e.data.worker_id)).toEqual(["w2"]);
    }
  });

  it("leases nothing of a hand-off to a parked poll killed before its commit; the next poll leases it once", async () => {
    const { run, store, openTasks } = await killedWithOpenLease("hang-hand-off");
    await expectWhole(store, run);
    const tasks = engine(store, new SystemClock());
    if (run.started.length === 0) {
      // SQLite: the hand-off was queued while the starts' transaction ran, so both were one commit
      // group (docs/storage.md § Group commit). Neither committed, and the starts were never answered.
      expect(dialect.name).toBe("sqlite");
      for (const id of openTasks) expect(await store.getTaskLease(id)).toBeNull();
      const round = (await store.listExecutions({ limit: 10_000 })).filter((e) => e.executionId.startsWith("crash-1-"));
      expect(round).toEqual([]);
      expect(await tasks.claim({ worker_id: "w2", workflows: OFFER, max_tasks: 100 })).toEqual([]);
      return;
    }
    expect(run.started).toHaveLength(20);
    for (const id of openTasks) {
      const task = await store.getTaskLease(id);
      expect(task?.state, `${id}: its lease was rolled back`).toBe("pending");
      expect((await store.listEvents(task!.executionId)).map((e) => e.type)).toEqual(["WorkflowCreated"]);
    }
    const again = await tasks.claim({ worker_id: "w2", workflows: OFFER, max_tasks: 100 });
    expect(again.map((t) => t.task_id).sort()).toEqual([...openTasks].sort());
    expect(await tasks.claim({ worker_id: "w3", workflows: OFFER, max_tasks: 100 })).toEqual([]);
  });

  it("leases nothing of a hand-off at start killed before its commit: the starts and their leases are gone together", async () => {
    const { run, store, openTasks } = await killedWithOpenLease("start-hang-hand-off");
    expect(run.started, "the round's starts never committed").toEqual([]);
    await expectWhole(store, run);
    for (const id of openTasks) expect(await store.getTaskLease(id)).toBeNull();
    const round = (await store.listExecutions({ limit: 10_000 })).filter((e) => e.executionId.startsWith("crash-1-"));
    expect(round).toEqual([]);
    expect(await engine(store, new SystemClock()).claim({ worker_id: "w2", workflows: OFFER, max_tasks: 100 })).toEqual(
      [],
    );
  });

  it.each([
    ["a hand-off", "hand-off-answer"],
    ["a hand-off at start", "start-hand-off-answer"],
  ])("%s committed but never answered is leased once, re-leased after its expiry, completed once", async (_, mode) => {
    location = await dialect.createLocation();
    const run = runChild(location, mode);
    child = run.child;
    const handed = (await run.waitFor((line) => line.startsWith("handed "))).slice("handed ".length).split(" ");
    expect(handed).toHaveLength(20);
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    const store = await location.open();
    await expectWhole(store, run);
    const leaseUntil: number[] = [];
    for (const id of handed) {
      const task = await store.getTaskLease(id);
      expect(task).toMatchObject({ state: "leased", leaseOwner: "w", attempt: 1 });
      leaseUntil.push(task!.leaseUntilMs!);
    }
    // After the lease's end the reaper puts each back (attempt 2); one poll leases them, once.
    const clock = new ManualClock(Math.max(...leaseUntil) + 1);
    const tasks = engine(store, clock);
    for (const id of handed) expect(await tasks.reap(id)).toBe(true);
    clock.advance(60_000); // past the retry back-off
    const again = await tasks.claim({ worker_id: "w2", workflows: OFFER, max_tasks: 100 });
    expect(again.map((t) => t.task_id).sort()).toEqual([...handed].sort());
    expect(again.every((t) => t.attempt === 2)).toBe(true);
    expect(await tasks.claim({ worker_id: "w3", workflows: OFFER, max_tasks: 100 })).toEqual([]);
    // The first worker's late report is refused; the second completes each execution once.
    const late = await tasks.completeMany(
      { workerId: "w", identity: null },
      handed.map((id) => ({ task_id: id, result: null })),
    );
    for (const id of handed) expect(late[id]).toMatchObject({ code: "CONFLICT" });
    const done = await tasks.completeMany(
      { workerId: "w2", identity: null },
      again.map((t) => ({ task_id: t.task_id, result: { ok: t.execution_id } })),
    );
    for (const t of again) {
      expect(done[t.task_id]).toEqual({ status: "COMPLETED" });
      const types = (await store.listEvents(t.execution_id)).map((e) => e.type);
      expect(types.filter((x) => x === "WorkflowCompleted")).toHaveLength(1);
      expect(types.filter((x) => x === "WorkflowTaskStarted")).toHaveLength(2);
    }
  });

  it("loses no completed batch when killed at an arbitrary point of a stream of batches", async () => {
    location = await dialect.createLocation();
    const run = runChild(location, "stream");
    child = run.child;
    await run.waitFor(() => run.completed.length >= 100);
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    const store = await location.open();
    await expectWhole(store, run);
  });
});
