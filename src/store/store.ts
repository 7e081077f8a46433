/**
 * The Store: every database access Orbit makes, behind one interface with two implementations
 * (src/store/sqlite, src/store/postgres). Engine and scheduler code receives a Store and never
 * builds one; only src/server/ and tests do.
 *
 * Every operation is a single SQL statement, so outside a transaction each is atomic on its own.
 * Anything that needs several statements to agree runs inside {@link Store.transaction}, whose
 * callback receives `tx` with the same operations bound to that transaction.
 */
import type { Execution, ExecutionEvent, ExecutionStatus } from "../domain/execution.js";
import type { JsonObject } from "../domain/json.js";
import type { Workflow } from "../domain/workflow.js";
import type { OutcomeStoreOps } from "./outcome-store.js";
import type {
  IdempotencyRecord,
  NewOccurrence,
  OccurrenceKind,
  OccurrenceRow,
  ScheduleRow,
  WorkerTask,
  WorkerTaskPatch,
} from "./rows.js";
import type { TaskStoreOps } from "./task-store.js";

export type DialectName = "sqlite" | "postgres";

/** The fields of an execution a state transition may change. */
export type ExecutionPatch = Partial<
  Pick<
    Execution,
    "status" | "result" | "error" | "cancelReason" | "run" | "attempt" | "startedMs" | "endedMs" | "trigger"
  >
>;

/** {@link Store.listSchedules}: a keyset page, filtered by the database. */
export interface ListSchedulesOptions {
  afterId?: string;
  workflow?: string;
  state?: string;
  limit: number;
}

export interface ExecutionFilter {
  workflow?: string;
  /** Only executions of these workflows (access control: the ones the caller may read). */
  workflows?: readonly string[];
  status?: ExecutionStatus;
  scheduleId?: string;
  /** Created at or after this instant (ms). */
  createdFromMs?: number;
  /** Created before this instant (ms). */
  createdToMs?: number;
  /** Keyset cursor: only executions strictly older than this (created_ms, execution_id) pair. */
  before?: { createdMs: number; executionId: string };
  /**
   * A summary (`GET /v1/executions?view=summary`): input and result are not selected, and each row
   * comes back with input `{}` and result null; only for answers that leave both out. PostgreSQL
   * then leaves a large one in its TOAST table; SQLite still walks a large result's overflow pages
   * to reach the columns after it (error, created_ms, …), but neither copies nor parses it.
   */
  summary?: boolean;
  limit: number;
}

/** A schedule search done by the database (docs/api.md § Listing and searching schedules). */
export interface ScheduleSearchFilter {
  q?: string;
  workflow?: string;
  state?: string;
  /** Only active schedules due before this instant (ms). */
  overdueBeforeMs?: number;
  /** `succeeded`, `failed`, `cancelled` or `none` (docs/outcomes.md's last_outcome). */
  outcome?: string;
  sort: "id" | "workflow" | "next_fire" | "last_fire" | "fired" | "skipped" | "updated" | "failures";
  order: "asc" | "desc";
  /** Keyset cursor: the previous page's last sort key and id. */
  after?: { key: string | number | null; id: string };
  limit: number;
}

/** Row locking for reads inside a transaction. Ignored on SQLite, where the write lock serialises. */
export interface LockOption {
  /** PostgreSQL: `FOR UPDATE`. Meaningful only inside a transaction. */
  forUpdate?: boolean;
  /**
   * PostgreSQL, with `forUpdate`: wait at most this long for the row's lock (`lock_timeout`), then
   * fail UNAVAILABLE with `details.lockTimeout`. Honoured by getSchedule.
   */
  waitMs?: number;
}

export interface DueScheduleQuery {
  /** Schedules whose `due_ms` is at or before this instant. */
  dueAtOrBeforeMs: number;
  limit: number;
  /**
   * PostgreSQL: take the rows `FOR UPDATE SKIP LOCKED`, so servers firing in shared mode each
   * get different rows. Meaningful only inside a transaction. Default false.
   */
  skipLocked?: boolean;
}

/** A due schedule as the firing loop reads it: its row and, beside it, its last execution's status. */
export interface DueSchedule extends ScheduleRow {
  /**
   * The status of `lastExecutionId` (null: none, or no longer stored), read in the same statement
   * as the row: what an overlap policy asks (docs/design.md § Overlap).
   */
  lastStatus: ExecutionStatus | null;
}

export interface OccurrenceQuery {
  /** Cursor: only rows with an id below this one. */
  beforeId?: number;
  /** Only these kinds (e.g. `["dead_letter"]`). Default: all. */
  kinds?: readonly OccurrenceKind[];
  limit: number;
}

/** The newest of a schedule's ledger that its view shows ({@link StoreOps.ledgerHeads}). */
export interface LedgerHead {
  lastTick: OccurrenceRow | null;
  /** Newest first. */
  deadLetters: OccurrenceRow[];
}

/** The compare-and-set guard of a schedule update. */
export interface ScheduleCas {
  expectedRevision: number;
  /** Also require this `next_fire_ms` (a fire's claim on its occurrence). Omit to skip the check. */
  expectedNextFireMs?: number | null;
}

/** A fire's write of a schedule row (see {@link StoreOps.advanceSchedules}). */
export interface ScheduleAdvance {
  /** The row as the fire leaves it; only the columns a fire changes are written. */
  row: ScheduleRow;
  /** The compare-and-set: the revision and next_fire_ms the fire read. */
  expectedRevision: number;
  expectedNextFireMs: number | null;
}

/** One batch of retention (see {@link StoreOps.pruneExecutions}). */
export interface PruneQuery {
  endedBeforeMs: number;
  /** Only this workflow's executions. */
  workflow?: string;
  /** Not these workflows' (they have their own retention). */
  exceptWorkflows?: readonly string[];
  limit: number;
  /** Keyset cursor: only executions after this (ended_ms, execution_id), the last one the previous batch read. */
  after?: PruneCursor;
}

/** Where a retention pass stands: the (ended_ms, execution_id) of the last execution a batch read. */
export interface PruneCursor {
  endedMs: number;
  executionId: string;
}

/** One retention batch's result: how many executions it deleted and where the next batch starts. */
export interface PruneBatch {
  deleted: number;
  /** How many executions it read (fewer than the limit: the pass is done). */
  read: number;
  /** The last execution the batch read (null when it read none): the next batch's `after`. */
  last: PruneCursor | null;
}

/** An event to append to an execution's history (it takes the execution's next sequence number). */
export interface NewEvent {
  executionId: string;
  type: string;
  data: JsonObject;
  atMs: number;
}

/** What runs once a transaction has ended (StoreOps.onEnd). Neither may throw. */
export interface TransactionEnd {
  /** After the COMMIT succeeded: what the transaction wrote is durable and visible. */
  committed(): void;
  /** After a rollback, or a COMMIT whose outcome is unknown (the connection failed during it). */
  rolledBack(): void;
}

/** Every operation; the worker protocol's are in task-store.ts, the outcomes' in outcome-store.ts. */
export interface StoreOps extends TaskStoreOps, OutcomeStoreOps {
  /**
   * Registers `end` to run when this transaction ends; false (and nothing registered) outside a
   * transaction and in a nested one (a savepoint of an outer transaction whose end it cannot see).
   * The hand-off of new tasks to parked polls answers them only after its COMMIT (task-hand-off.ts).
   */
  onEnd(end: TransactionEnd): boolean;
  // Workflows
  /** Inserts unless (name, version) exists; true when inserted. */
  insertWorkflow(workflow: Workflow): Promise<boolean>;
  getWorkflow(name: string, version: string): Promise<Workflow | null>;
  /** Versions of one workflow, highest semver first. */
  listWorkflowVersions(name: string): Promise<Workflow[]>;
  /** Every version of every workflow, by name, highest semver first within a name. */
  listWorkflows(): Promise<Workflow[]>;

  // Executions
  /** `INSERT … ON CONFLICT DO NOTHING`: true when inserted, false when the id already existed. */
  insertExecution(execution: Execution): Promise<boolean>;
  getExecution(executionId: string, lock?: LockOption): Promise<Execution | null>;
  /** Applies the patch; true when the row exists. */
  updateExecution(executionId: string, patch: ExecutionPatch): Promise<boolean>;
  /**
   * A RUNNING or COMPENSATING execution holding the concurrency key, if any; one of a schedule
   * other than `otherThan` when there is one.
   */
  findActiveExecutionWithKey(key: string, otherThan?: string | null): Promise<Execution | null>;
  /** Executions in RUNNING or COMPENSATING. */
  countActiveExecutions(): Promise<number>;
  /** How many executions have each status (statuses with none are absent). Metrics read it on scrape. */
  countExecutionsByStatus(): Promise<Partial<Record<ExecutionStatus, number>>>;
  /**
   * Serialises admission checks (`--max-active-executions`) until the transaction ends:
   * PostgreSQL takes a transaction-scoped advisory lock; SQLite needs nothing (its write lock does it).
   */
  lockExecutionAdmission(): Promise<void>;
  /**
   * Serialises the starts that check who holds this concurrency key until the transaction ends
   * (the check, then the insert of the execution that takes the key): PostgreSQL takes a
   * transaction-scoped advisory lock on the key; SQLite needs nothing.
   */
  lockConcurrencyKey(key: string): Promise<void>;
  /**
   * Locks an apply's scope (its labels as canonical text) until the transaction ends, so two
   * applies that prune one scope run one after the other (PostgreSQL; SQLite has one writer).
   */
  lockApplyScope(scope: string): Promise<void>;
  /** Newest first: by created_ms, then execution_id, both descending. */
  listExecutions(filter: ExecutionFilter): Promise<Execution[]>;
  /**
   * Appends an event with the next sequence number of the execution. Concurrent appends to the same
   * execution must be serialised by the caller (lock the execution row first inside a transaction).
   */
  appendEvent(executionId: string, type: string, data: JsonObject, atMs: number): Promise<ExecutionEvent>;
  /**
   * Tells every server sharing the database, at this transaction's commit, that a cancel was
   * requested for a run some worker holds (PostgreSQL NOTIFY; nothing on SQLite, one server).
   */
  notifyCancelRequested(): Promise<void>;
  listEvents(executionId: string): Promise<ExecutionEvent[]>;

  /**
   * Batched starts (the scheduler's fire batch): one `INSERT … ON CONFLICT DO NOTHING` for all;
   * returns the ids inserted (an id that existed is absent). Statement count does not grow with
   * the number of rows on PostgreSQL.
   */
  insertExecutions(executions: readonly Execution[]): Promise<string[]>;
  /**
   * Appends each execution's first event, `WorkflowCreated` (seq 1) at its `createdMs`, whose data
   * is the execution's own `{workflow, version, input}` plus `schedule_id` and `trigger` when set
   * (docs/storage.md § Start). For executions just inserted; an existing seq 1 fails the statement.
   * PostgreSQL builds the data from the stored row, so it is not sent a second time.
   */
  insertCreatedEvents(executions: readonly Execution[]): Promise<void>;
  /** The statuses of the executions that exist among `executionIds`. */
  getExecutionStatuses(executionIds: readonly string[]): Promise<Map<string, ExecutionStatus>>;
  /** The error types (`Timeout`, …) of those among `executionIds` that ended with an error that has one. */
  getExecutionErrorTypes(executionIds: readonly string[]): Promise<Map<string, string>>;

  // Worker tasks
  insertTask(task: WorkerTask): Promise<void>;
  /** {@link insertTask} for many tasks at once. */
  insertTasks(tasks: readonly WorkerTask[]): Promise<void>;
  /** The task of the execution's latest run (highest run, then newest). */
  getTaskForExecution(executionId: string, lock?: LockOption): Promise<WorkerTask | null>;
  updateTask(taskId: string, patch: WorkerTaskPatch): Promise<boolean>;

  // Schedules (the scheduler builds its CRUD and fire on these)
  /** Inserts unless the id exists; true when inserted. */
  insertSchedule(row: ScheduleRow): Promise<boolean>;
  /**
   * {@link insertSchedule} for many rows at once (a batch create, `apply`): one statement on
   * PostgreSQL whatever the number of rows; returns the ids inserted, in the rows' order (an id that
   * existed is absent).
   */
  insertSchedules(rows: readonly ScheduleRow[]): Promise<string[]>;
  getSchedule(scheduleId: string, lock?: LockOption): Promise<ScheduleRow | null>;
  /** The schedules that exist among `scheduleIds`, by id (one statement; `lock` takes them all). */
  getSchedules(scheduleIds: readonly string[], lock?: LockOption): Promise<ScheduleRow[]>;
  /** Schedules ordered by id, after `afterId` when given, of one workflow and one state when given. */
  listSchedules(opts: ListSchedulesOptions): Promise<ScheduleRow[]>;
  /**
   * The bytes of input and settings of each row `listSchedules(query)` or, given a search filter,
   * `searchSchedules(query)` would read, in their order, without reading them.
   */
  scheduleSizes(query: ListSchedulesOptions | ScheduleSearchFilter): Promise<number[]>;
  /** A page of a schedule search and the matches by state (src/store/sql/schedule-search-sql.ts). */
  searchSchedules(filter: ScheduleSearchFilter): Promise<{ rows: ScheduleRow[]; counts: Record<string, number> }>;
  /**
   * Writes every column of `row` except `schedule_id` and `created_ms`, with `revision` set to
   * `cas.expectedRevision + 1`, only if the stored row still has the expected revision (and
   * next_fire_ms, when given). Returns the stored row, or null when nothing matched.
   */
  updateSchedule(row: ScheduleRow, cas: ScheduleCas): Promise<ScheduleRow | null>;
  /**
   * A fire batch's schedule writes: for each entry, writes the columns a fire changes (state,
   * next_fire_ms, due_ms, retry_ms, fired, skipped, last_fire_ms, last_execution_id, last_error,
   * buffered) and moves the revision by one, only if the stored row still has the expected revision
   * and next_fire_ms (the same guard as {@link updateSchedule} with both). The other columns are
   * left as stored, which is what the fire read: any change to them moves the revision. Returns the
   * ids of the rows that matched.
   */
  advanceSchedules(advances: readonly ScheduleAdvance[]): Promise<string[]>;
  /**
   * Deletes the schedule and its ledger (not its executions); with `expectedRevision`, only at that
   * revision. True when a row was deleted. Call it in a transaction to delete both at once. Keeps the
   * deleted revision (deletedRevisions), so one created again under the id continues past it.
   */
  deleteSchedule(scheduleId: string, expectedRevision?: number): Promise<boolean>;
  /** The last revision of each of these ids whose schedule was deleted (absent: never deleted). */
  deletedRevisions(scheduleIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * Active schedules due at or before the given instant, by due_ms then schedule_id; without their
   * `outcomes` (a fire does not read them).
   */
  listDueSchedules(query: DueScheduleQuery): Promise<DueSchedule[]>;
  /**
   * Makes active, unpaused schedules that hold buffered occurrences due at `dueMs` (if later), so
   * the loop starts the buffer when the executions ahead of it ended: the schedules named, and every
   * schedule sharing one of the concurrency keys (one statement). Moves their revision; returns how many.
   */
  wakeBufferedSchedules(
    target: { scheduleIds: readonly string[]; concurrencyKeys: readonly string[] },
    dueMs: number,
  ): Promise<number>;
  /** The earliest due_ms of any active schedule, or null: when the loop should wake next. */
  nextDueMs(): Promise<number | null>;
  /**
   * Active, unpaused schedules whose due_ms is before the instant, or that wait to retry a start
   * that failed: with `now - grace`, the schedules that are due and not starting
   * (`orbit_schedules_overdue`).
   */
  countOverdueSchedules(dueBeforeMs: number): Promise<number>;

  // Occurrence ledger
  appendOccurrence(occurrence: NewOccurrence): Promise<OccurrenceRow>;
  /** {@link appendOccurrence} for many rows, in this order (ids ascend with it), returning nothing. */
  appendOccurrences(occurrences: readonly NewOccurrence[]): Promise<void>;
  /** Newest first. */
  listOccurrences(scheduleId: string, query: OccurrenceQuery): Promise<OccurrenceRow[]>;
  /**
   * For each schedule, its newest ledger row (`last_tick`, null without one) and its newest
   * `deadLetters` dead letters, newest first: what a schedule's view shows, for a page of
   * schedules in two statements.
   */
  ledgerHeads(scheduleIds: readonly string[], deadLetters: number): Promise<Map<string, LedgerHead>>;
  /**
   * The latest nominal occurrence the schedule's ledger has decided (started, skipped, buffered or
   * a dead letter; a range by its last), or null: the floor a recomputed next occurrence must stay
   * above, whatever the clock says (docs/design.md § Exactly once).
   */
  lastDecidedOccurrenceMs(scheduleId: string): Promise<number | null>;
  /** Keeps the newest `keep` rows of the schedule; returns how many were deleted. */
  pruneOccurrences(scheduleId: string, keep: number): Promise<number>;
  /** {@link pruneOccurrences} for each of the schedules, in one statement on PostgreSQL. */
  pruneOccurrencesOf(scheduleIds: readonly string[], keep: number): Promise<number>;

  // Idempotency keys
  /** Inserts unless (scope, key) exists; true when inserted. */
  /**
   * Inserts unless the key exists; true when inserted. `waitMs` (PostgreSQL): how long to wait for
   * another transaction's uncommitted claim of the key before failing UNAVAILABLE `lockTimeout`.
   */
  insertIdempotencyKey(record: IdempotencyRecord, waitMs?: number): Promise<boolean>;
  getIdempotencyKey(scope: string, key: string): Promise<IdempotencyRecord | null>;
  /** Records the answer of a claimed key (inserted with status 0 inside the same transaction). */
  setIdempotencyAnswer(scope: string, key: string, status: number, response: string | null): Promise<boolean>;
  deleteIdempotencyKey(scope: string, key: string): Promise<boolean>;
  /** Deletes keys created before the instant; returns how many. */
  deleteIdempotencyKeysBefore(createdBeforeMs: number): Promise<number>;

  // Retention (src/engine/retention.ts)
  /**
   * Deletes up to `limit` ended executions (COMPLETED, FAILED, CANCELLED) that ended before the
   * instant, oldest first, with their events, step results and tasks; never one that is a schedule's
   * last execution, and only after `query.after` in (ended_ms, execution_id) order. Call inside a
   * transaction. Returns how many were deleted and the last one read (the next batch's cursor).
   */
  pruneExecutions(query: PruneQuery): Promise<PruneBatch>;
  /** The ended_ms of the `keep`-th newest ended execution (those that ended before it are beyond a count limit), or null. */
  endedCutoffKeeping(keep: number): Promise<number | null>;

  /** The database server's clock, epoch ms (shared-mode due checks compare against it). */
  databaseNow(): Promise<number>;
  /** The migration versions recorded in the database, ascending (`orbit doctor`). */
  appliedMigrations(): Promise<number[]>;
}

export interface TransactionOptions {
  /**
   * SQLite: this transaction goes ahead of every queued operation that is not urgent (the firing
   * loop's batches, so that worker traffic never makes occurrences fire late). It never interrupts
   * the transaction that holds the connection. PostgreSQL ignores it: each transaction has its own
   * connection. Default false.
   */
  urgent?: boolean;
}

export interface Store extends StoreOps {
  readonly dialect: DialectName;
  /** Connects, creates what is missing and applies pending migrations. */
  open(): Promise<void>;
  /** Waits for running operations, then releases the connection(s). Idempotent. */
  close(): Promise<void>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (the error
   * is rethrown). Use only `tx` inside; on SQLite, calling the store itself from inside its own
   * transaction would wait for the transaction to end, so it throws instead.
   */
  transaction<T>(fn: (tx: StoreOps) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs `fn` in one transaction that every call on this store made while it runs joins (nested
   * transactions become savepoints), so a request's writes and its Idempotency-Key commit
   * together: on PostgreSQL across servers, on SQLite across a crash between the two.
   */
  atomically?<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T>;
  /**
   * SQLite: until the returned function is called, only urgent transactions get the connection
   * (the firing loop, while it fires a herd). Absent on PostgreSQL, where each transaction has its
   * own connection.
   */
  prioritize?(): () => void;
  /**
   * Why the database cannot be written, or null; readiness reports not-ready while it is not null.
   * SQLite: a write failed on a read-only file, folder or file system, or a full disk. PostgreSQL:
   * a standby, or `default_transaction_read_only` (asked on a pooled connection).
   */
  writeProblem?(): Promise<string | null>;
  /**
   * Runs `fn` on reads that must answer while the server's own work waits on the database (a lock
   * held on an Orbit table keeps the fire, the polls and the requests waiting, each on a pooled
   * connection, until every one is): readiness and /metrics. PostgreSQL: on connections apart from
   * that pool, whose statements PostgreSQL stops after 1 s waiting for a lock or 4 s in all
   * (UNAVAILABLE). Absent on SQLite, whose reads take no lock (WAL) and share its one connection.
   */
  readApart?<T>(fn: (ops: StoreOps) => Promise<T>): Promise<T>;
  /**
   * Runs `fn`'s reads on one snapshot of the database, so that reads which must agree do (a
   * search's page and its counts): PostgreSQL, one REPEATABLE READ READ ONLY transaction (its plain
   * statements each read the database as it is then); SQLite, one transaction on its one connection
   * (its plain reads run one at a time, and a write could come between two).
   */
  readSnapshot?<T>(fn: (ops: StoreOps) => Promise<T>): Promise<T>;
  /**
   * `orbit doctor`: upkeep the database leaves undone that Orbit's tables need, or null.
   * PostgreSQL: autovacuum off, for the server or for one of Orbit's tables (their rows are
   * rewritten on every fire and report, so the tables and the fire lag grow without it).
   */
  maintenanceProblem?(): Promise<string | null>;
  /**
   * How many of this store's operations failed because the database was away (`isOutage`: gone,
   * refusing connections, unanswered; not a transaction it aborted), since it was made. The lease
   * reaper owes its leases a grace after any (src/engine/task-reaper.ts). PostgreSQL only.
   */
  outageCount?(): number;
  /**
   * The last write failure met, known without asking the database (null after a write succeeds):
   * what readiness says when its own check gets no answer in time (SQLite waiting for another
   * process's lock said "the database does not answer", where writes named the lock).
   */
  knownWriteProblem?(): string | null;
  /**
   * `performance.now()` when a statement last got its answer (PostgreSQL), or null before the
   * first: readiness takes it as the database answering while its own check waits behind a busy
   * pool (src/server/readiness.ts).
   */
  lastAnswerAt?(): number | null;
}
