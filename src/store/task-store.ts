/**
 * The Store operations of the worker protocol (src/engine/tasks.ts): leasing tasks, extending and
 * reaping leases, and the step journal (orbit_step_results). Part of {@link StoreOps}; the SQL is
 * in src/store/sql/task-ops.ts, shared by both dialects.
 */
import type { Execution } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import type { WorkerTask, WorkerTaskState } from "./rows.js";
import type { LockOption, NewEvent } from "./store.js";

/** A worker task with the retry policy it was leased under (set by the lease; default 1 attempt, no back-off). */
/** The tasks one grace extended, and the lease end it gave them. */
export interface GracedLeases {
  readonly end: number;
  readonly taskIds: readonly string[];
}

export interface TaskLease extends WorkerTask {
  maxAttempts: number;
  backoffMs: number;
}

/** A workflow's tasks waiting for a worker (TaskStoreOps.readyTasksByWorkflow). */
export interface ReadyTasks {
  workflow: string;
  ready: number;
  /** The `available_ms` of its oldest ready task; null when none is ready. */
  oldestAvailableMs: number | null;
}

/** A workflow version a worker can run. */
export interface WorkflowRef {
  name: string;
  version: string;
}

export interface ClaimableTaskQuery {
  /** Only tasks of these workflow versions (at least one). */
  workflows: readonly WorkflowRef[];
  /** Only tasks available at or before this instant. */
  availableAtOrBeforeMs: number;
  limit: number;
  /** PostgreSQL: `FOR UPDATE SKIP LOCKED`, so pollers on several servers take different tasks. Default false. */
  skipLocked?: boolean;
}

/** A pending task, its execution, and whether the task's run has journaled steps (a retried attempt's). */
export interface ClaimCandidate {
  task: TaskLease;
  execution: Execution;
  hasSteps: boolean;
}

/** What a batched complete writes: see {@link TaskStoreOps.writeCompletions}. */
export interface CompletionWrites {
  executions: readonly { executionId: string; result: JsonValue }[];
  doneTaskIds: readonly string[];
  events: readonly NewEvent[];
}

export interface NewLease {
  owner: string;
  /** The identity the worker authenticated as (docs/security.md); null on a server without identities. */
  identity: string | null;
  /**
   * The worker process the lease went to (the poll's `instance`; null: a poll without one). Two
   * processes sharing a `worker_id` share its leases; only this tells their leases apart.
   */
  instance: string | null;
  leaseUntilMs: number;
  maxAttempts: number;
  backoffMs: number;
}

/** One journaled step of one run: it completed, and its result is what a retried run receives. */
export interface StepResultRow {
  executionId: string;
  run: number;
  step: string;
  /** Order of completion within the run, from 1; compensations run in reverse. */
  seq: number;
  result: JsonValue | null;
  hasCompensation: boolean;
  compensatedMs: number | null;
  completedMs: number;
}

export interface TaskStoreOps {
  /** Pending tasks of the given workflows available now, oldest available first. */
  listClaimableTasks(query: ClaimableTaskQuery): Promise<TaskLease[]>;
  /**
   * {@link listClaimableTasks} with each task's execution, in one statement; with `skipLocked`, the
   * task and its execution are both locked (PostgreSQL `FOR UPDATE OF t, e SKIP LOCKED`: a task whose
   * execution another transaction holds, a cancel say, is passed over, never waited for).
   */
  listClaimable(query: ClaimableTaskQuery): Promise<ClaimCandidate[]>;
  /**
   * Tasks leased to `owner` (and `identity`, when not null; and to the process `instance`, when not
   * null) whose lease has not ended at `nowMs`, with their executions, by task id, at most `limit`:
   * what a worker that lost a poll's answer may have been handed (src/engine/task-redeliver.ts).
   */
  listLeasedTo(
    owner: string,
    identity: string | null,
    instance: string | null,
    nowMs: number,
    limit: number,
  ): Promise<ClaimCandidate[]>;
  /** The earliest `available_ms` of a pending task of these workflows (a back-off in progress), or null. */
  nextAvailableTaskMs(workflows: readonly WorkflowRef[]): Promise<number | null>;
  /**
   * The tasks ready to run (pending, available at or before `nowMs`) of each workflow, with the
   * earliest one's `available_ms`; a registered workflow without any reads 0 (/metrics).
   */
  readyTasksByWorkflow(nowMs: number): Promise<ReadyTasks[]>;
  getTaskLease(taskId: string, lock?: LockOption): Promise<TaskLease | null>;
  /** Pending → leased to `owner` with the policy; false when the task was no longer pending. */
  leaseTask(taskId: string, lease: NewLease): Promise<boolean>;
  /** {@link leaseTask} for many tasks in one statement; returns the ids of those that were still pending. */
  leaseTasks(taskIds: readonly string[], lease: NewLease): Promise<string[]>;
  /** {@link lockExecutionIfFree} for many in one statement: those that exist and no other transaction holds. */
  lockExecutionsIfFree(executionIds: readonly string[]): Promise<Execution[]>;
  /** One event appended to each of several executions (at most one per execution), each at its next seq. */
  appendEvents(events: readonly NewEvent[]): Promise<void>;
  /**
   * A batch of reports' locks (docs/workflows.md § Batched completes): the executions of those of
   * the tasks that exist, then the tasks, each set locked (`FOR UPDATE`) in one statement in id
   * order, so that concurrent batches take their locks in one order. Executions before tasks, as
   * every report locks them. Missing ids are absent.
   */
  lockTasksAndExecutions(taskIds: readonly string[]): Promise<{ tasks: TaskLease[]; executions: Execution[] }>;
  /** RUNNING → COMPLETED with each its result, `ended_ms` set and `error` cleared: one statement. */
  completeExecutions(rows: readonly { executionId: string; result: JsonValue }[], endedMs: number): Promise<void>;
  /** Sets the state of every one of the tasks (one statement). */
  setTasksState(taskIds: readonly string[], state: WorkerTaskState): Promise<void>;
  /**
   * A batched complete's writes (src/engine/complete-batch.ts): {@link completeExecutions}, the
   * tasks `done` ({@link setTasksState}) and the events ({@link appendEvents}, at most one per
   * execution), as one statement on PostgreSQL (one round trip instead of three).
   */
  writeCompletions(batch: CompletionWrites, endedMs: number): Promise<void>;
  /** The journaled steps of several executions, every run, by execution, run and `seq`. */
  listStepResultsOf(executionIds: readonly string[]): Promise<StepResultRow[]>;
  /**
   * Moves `lease_until_ms` of those of the tasks still leased to `owner` whose lease has not ended
   * before `nowMs` (an expired lease is not revived, reaped or not); returns their ids. With an
   * `identity`, only leases taken by that identity (or by none: taken without identities).
   */
  extendLeases(
    owner: string,
    identity: string | null,
    taskIds: readonly string[],
    leaseUntilMs: number,
    nowMs: number,
  ): Promise<string[]>;
  /** The cancel reason (null: none) of each of the tasks' executions, by task id (one statement). */
  cancelReasonsOfTasks(taskIds: readonly string[]): Promise<Map<string, string | null>>;
  /** Leased tasks whose lease ended before the instant, earliest first (PostgreSQL: SKIP LOCKED when asked). */
  listExpiredLeases(beforeMs: number, limit: number, skipLocked?: boolean): Promise<TaskLease[]>;
  /** The earliest lease expiry of any leased task, or null: when the reaper should look next. */
  nextLeaseExpiryMs(): Promise<number | null>;
  /**
   * Every leased task whose lease ends before `untilMs` now ends at it: the grace a server gives
   * after it could not hear its workers (docs/workflows.md § Leases). Not the tasks of an earlier
   * grace in `passOver` whose lease still ends where that grace put it (no heartbeat moved it
   * since). With `heardWithinMs` (a server's start), not the tasks whose worker the database last
   * heard of more than that long before the lease's last renewal (`lease_until_ms` − the lease):
   * a worker unheard since it was given a lease or a grace is not given another. Returns the ids of
   * the tasks extended.
   */
  extendLapsedLeases(untilMs: number, passOver?: readonly GracedLeases[], heardWithinMs?: number): Promise<string[]>;
  /** The execution locked `FOR UPDATE SKIP LOCKED` (PostgreSQL): null when missing or another transaction holds it. */
  lockExecutionIfFree(executionId: string): Promise<Execution | null>;
  /** Replaces the input (continue-as-new starts the next run with a new input). */
  setExecutionInput(executionId: string, input: JsonObject): Promise<boolean>;
  /** Inserts unless (execution, run, step) exists; true when inserted. */
  insertStepResult(row: StepResultRow): Promise<boolean>;
  /** The run's journaled steps, by `seq`. */
  listStepResults(executionId: string, run: number): Promise<StepResultRow[]>;
  markStepCompensated(executionId: string, run: number, step: string, atMs: number): Promise<boolean>;
}
