/**
 * The Store operations of outcomes (docs/outcomes.md): a schedule's last outcome and failure
 * counters, execution deadlines, workers seen polling, per-workflow settings, deprecated versions
 * and the notify webhook outbox. Part of {@link StoreOps}; the SQL is in src/store/sql/outcome-ops.ts.
 */
import type { JsonObject } from "../domain/json.js";
import type { ScheduleCounters, ScheduleOutcomes } from "./rows.js";
import type { WorkflowRef } from "./task-store.js";

/** Which deadline an execution passed. */
export type TimeoutKind = "start_timeout" | "run_timeout";

export interface ExpiredDeadline {
  executionId: string;
  kind: TimeoutKind;
}

export interface WorkerRow {
  workerId: string;
  workflows: WorkflowRef[];
  firstSeenMs: number;
  lastPollMs: number;
  /** When it said it was leaving (Worker.close()), or null: a worker that left is gone at once. */
  leftMs: number | null;
}

export type NotificationState = "pending" | "delivered" | "failed";

export interface NewNotification {
  scheduleId: string | null;
  workflow: string;
  /** failure, timeout, dead_letter, paused, recovery. */
  event: string;
  url: string;
  payload: JsonObject;
  createdMs: number;
}

export interface NotificationRow extends NewNotification {
  id: number;
  state: NotificationState;
  attempts: number;
  nextAttemptMs: number | null;
  lastError: string | null;
  deliveredMs: number | null;
}

export interface NotificationPatch {
  state: NotificationState;
  attempts: number;
  nextAttemptMs: number | null;
  lastError: string | null;
  deliveredMs: number | null;
}

/** A schedule's outcome figures, as the per-schedule metrics show them (docs/outcomes.md § Metrics). */
export interface ScheduleOutcomeFigures {
  scheduleId: string;
  lastSuccessMs: number | null;
  consecutiveFailures: number;
  failures: number;
}

/** The same figures over every schedule: the oldest last success, the worst run of failures, the sum. */
export interface ScheduleOutcomeAggregate {
  schedules: number;
  oldestLastSuccessMs: number | null;
  maxConsecutiveFailures: number;
  failures: number;
}

export interface OutcomeStoreOps {
  /** Writes the outcome columns only (the revision does not move); true when the schedule exists. */
  setScheduleOutcomes(scheduleId: string, outcomes: ScheduleOutcomes): Promise<boolean>;
  /** {@link setScheduleOutcomes} for many schedules, each once (one statement on PostgreSQL). */
  setSchedulesOutcomes(entries: readonly { scheduleId: string; outcomes: ScheduleOutcomes }[]): Promise<void>;

  /**
   * The outcome counters of those of the schedules that exist, locked (`FOR UPDATE`) in id order:
   * what a batch of completions reads (src/scheduler/outcomes.ts recordOutcomes), without decoding
   * the rows.
   */
  lockScheduleCounters(scheduleIds: readonly string[]): Promise<Map<string, ScheduleCounters & { createdMs: number }>>;
  /**
   * Locks (`FOR UPDATE`), in schedule_id order and in one statement, the schedule rows that the end
   * of these executions may write: each one's schedule (its outcome) and the schedules sharing its
   * concurrency key with a buffer to wake (src/scheduler/scheduler.ts wakeBuffers). A transaction
   * that may end executions calls it before it locks them, so that every path takes schedule rows
   * before execution rows (docs/storage.md § Locking). The executions are named by id or through
   * their worker tasks. Nothing on SQLite, whose one writer holds every row already.
   */
  lockSchedulesForEnd(of: { executionIds?: readonly string[]; taskIds?: readonly string[] }): Promise<void>;
  /**
   * Locks these executions in id order, then their tasks in id order (PostgreSQL; nothing on
   * SQLite): the order a batched complete and a heartbeat take them in. A fire batch whose
   * cancel_previous cancels several executions takes them all first, where it took each execution
   * and its task schedule by schedule, and a heartbeat holding one of the tasks while waiting for
   * another was a deadlock (40P01, a tester's soak).
   */
  lockExecutionsAndTasks(executionIds: readonly string[]): Promise<void>;

  /** Sets the deadlines of just-started executions (only those with a timeout). */
  setExecutionDeadlines(
    executionIds: readonly string[],
    startDeadlineMs: number | null,
    runDeadlineMs: number | null,
  ): Promise<void>;
  /**
   * Moves the start and run deadlines of every active execution by `ms` (whole, either way): the
   * host's wall clock of a single server stepped that far, which is no time the executions ran
   * (src/clock/host-clock.ts). With `leaseCapMs`, no lease ends after it (a step back: the leases
   * granted in the time ahead were that much too long). Returns how many executions it moved.
   */
  shiftExecutionDeadlines(ms: number, leaseCapMs?: number): Promise<number>;
  /** Records the timeouts the start requests of these executions (of no schedule) gave, in ms (0021). */
  setGivenTimeouts(
    executionIds: readonly string[],
    startTimeoutMs: number | null,
    runTimeoutMs: number | null,
  ): Promise<void>;
  /** {@link setGivenTimeouts}' values for the execution: null each that was not given. */
  getGivenTimeouts(executionId: string): Promise<{ startTimeoutMs: number | null; runTimeoutMs: number | null }>;
  /** Clears the start deadline (a worker took the task) or both (the execution timed out). */
  clearDeadlines(executionId: string, which: "start" | "both"): Promise<void>;
  getExecutionDeadlines(executionId: string): Promise<{ startDeadlineMs: number | null; runDeadlineMs: number | null }>;
  /** Running executions past a deadline at the instant, earliest first. */
  listExpiredDeadlines(atOrBeforeMs: number, limit: number): Promise<ExpiredDeadline[]>;
  /** The earliest deadline of a running execution, or null. */
  nextDeadlineMs(): Promise<number | null>;

  /** Inserts or refreshes a worker's row. */
  upsertWorker(workerId: string, workflows: readonly WorkflowRef[], nowMs: number): Promise<void>;
  /** Workers polled at or after the instant, by id. */
  listWorkers(seenSinceMs: number): Promise<WorkerRow[]>;
  /** One worker's row, or null when it was never seen (or forgotten). */
  getWorker(workerId: string): Promise<WorkerRow | null>;
  /** Records that the worker left (it polls no more); a later poll of the same id brings it back. */
  markWorkerLeft(workerId: string, nowMs: number): Promise<void>;
  /** Leased tasks per worker (lease owner) and workflow: worker id → workflow name → count. */
  countLeasedTasks(): Promise<Map<string, Map<string, number>>>;

  /** The settings of a workflow name (`{}` when none were set). */
  getWorkflowSettings(name: string): Promise<JsonObject>;
  putWorkflowSettings(name: string, settings: JsonObject, nowMs: number): Promise<void>;
  /** Marks (a number) or unmarks (null) a version deprecated; true when it exists. */
  setWorkflowDeprecated(name: string, version: string, deprecatedMs: number | null): Promise<boolean>;

  insertNotifications(rows: readonly NewNotification[], firstAttemptMs: number): Promise<void>;
  /** Pending deliveries due at the instant, oldest first. */
  listDueNotifications(atOrBeforeMs: number, limit: number): Promise<NotificationRow[]>;
  /**
   * Deletes the ended (delivered or failed) deliveries of a schedule (or, with `scheduleId` null,
   * of a workflow's own targets) beyond its newest `keep`; returns how many.
   */
  pruneNotificationsOf(scheduleId: string | null, workflow: string, keep: number): Promise<number>;
  /** The earliest next attempt of a pending delivery, or null. */
  nextNotificationMs(): Promise<number | null>;
  /**
   * Takes a due delivery for one attempt: moves its next attempt to `untilMs` if the row is still
   * pending as `seen` read it (same attempts and next attempt). False: another pass or server took
   * it, or it was recorded meanwhile; it must not be sent.
   */
  claimNotification(
    id: number,
    seen: Pick<NotificationRow, "attempts" | "nextAttemptMs">,
    untilMs: number,
  ): Promise<boolean>;
  /**
   * Records an attempt. With `claimedUntilMs`, only while the claim is still this one's (its next
   * attempt still `claimedUntilMs`); false when it was not recorded.
   */
  updateNotification(id: number, patch: NotificationPatch, claimedUntilMs?: number): Promise<boolean>;
  /** A schedule's deliveries, newest first: at most `limit`, those with an id below `beforeId` when given. */
  listNotifications(scheduleId: string, page: { limit: number; beforeId?: number }): Promise<NotificationRow[]>;

  /** The outcome figures of the first `limit` schedules by id. */
  listScheduleOutcomeFigures(limit: number): Promise<ScheduleOutcomeFigures[]>;
  aggregateScheduleOutcomes(): Promise<ScheduleOutcomeAggregate>;
}
