/**
 * Workers as the server sees them (docs/outcomes.md § Workers and stalls): each poll and heartbeat
 * records the worker (at most one write per worker every few seconds, so the poll path stays one
 * read when nothing changed), `GET /v1/workers` lists them, and an execution waiting for a worker
 * says why: no worker polls its workflow, none polls its version, a back-off, or all are busy.
 */

import type { NowClock as Clock } from "../domain/clock.js";
import type { Execution } from "../domain/execution.js";
import type { WorkerRow } from "../store/outcome-store.js";
import type { Store } from "../store/store.js";
import type { WorkflowRef } from "../store/task-store.js";
import { formatInstant } from "../time/format.js";
import { WorkerInstances } from "./worker-instances.js";

/** A worker seen within this long is live; polls return at least every 20 s, heartbeats every 5 s. */
export const LIVE_WORKER_MS = 60_000;
/** `GET /v1/workers` lists workers seen within this long (live or not). */
export const LISTED_WORKER_MS = 3_600_000;
/** The longest a worker's row goes without a write while it polls. */
const WRITE_EVERY_MS = 5_000;

/** Live: seen polling within LIVE_WORKER_MS and not left since (Worker.close() says so). */
export function isLive(w: WorkerRow, now: number): boolean {
  return w.leftMs === null && now - w.lastPollMs <= LIVE_WORKER_MS;
}

export interface WorkerJson {
  worker_id: string;
  /** `live`: seen within the last minute; `gone`: not since, or it said it left. */
  status: "live" | "gone";
  workflows: WorkflowRef[];
  first_seen_at: string;
  last_seen_at: string;
  /** Tasks it holds the lease of now. */
  running_tasks: number;
  /**
   * Its free slots at its last poll on this server (within the last 25 s); null when it has not
   * polled here lately, or when it runs a workflow the caller may not see (its slots count those
   * tasks too).
   */
  free_slots: number | null;
  /**
   * No free slot yet no task held: code of runs it no longer holds (a cancel it ignored past its
   * grace, a lease it lost) has not returned and keeps the slots, so it takes no work (docs/workflows.md § Cancellation and compensation).
   */
  stuck: boolean;
}

export interface Waiting {
  /** `no_worker`, `no_worker_for_version`, `retry_backoff` or `queued`. */
  reason: string;
  message: string;
}

/** How long after a report that ended a task the worker's next poll is awaited before it reads stuck. */
const REPORT_SETTLE_MS = 2_000;

/** A live worker is heard at least this often (the poll timeout, 20 s, and a margin). */
const SILENT_POLL_MS = 25_000;

export class WorkerRegistry {
  private readonly written = new Map<string, { at: number; key: string; workflows: WorkflowRef[] }>();
  /** Each worker's last poll on this server: its free slots then (`max_tasks`), and when. */
  private readonly lastPoll = new Map<string, { free: number; at: number; reportedAt: number | null }>();
  /** The processes polling under each worker id (the polls' `instance`). */
  private readonly instances = new WorkerInstances(LIVE_WORKER_MS);

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** A poll (with its workflows) or a heartbeat (without): records the worker when due. */
  async seen(workerId: string, workflows?: readonly WorkflowRef[]): Promise<void> {
    const now = this.clock.now();
    const last = this.written.get(workerId);
    let list = workflows?.map((w) => ({ name: w.name, version: w.version })) ?? last?.workflows;
    if (list === undefined) {
      // A heartbeat from a worker this server never saw poll (it restarted, or the worker's polls
      // go to another server): its row says what it runs. Skipped, a worker busy at full
      // concurrency (it only heartbeats) was listed gone after a restart.
      const row = await this.store.getWorker(workerId);
      if (row === null || row.leftMs !== null) return;
      list = row.workflows.map((w) => ({ name: w.name, version: w.version }));
    }
    const key = list.map((w) => `${w.name}@${w.version}`).join(",");
    if (last !== undefined && last.key === key && now - last.at < WRITE_EVERY_MS) return;
    if (this.written.size > 10_000) this.forgetOld(now);
    this.written.set(workerId, { at: now, key, workflows: list });
    await this.store.upsertWorker(workerId, list, now);
  }

  /**
   * A poll's free slots (`max_tasks`, default 1): a worker with none that holds no task is stuck
   * (waiting()). With the poll's `instance` (its process), a warning to log when two processes
   * poll under this one worker id (worker-instances.ts), else null.
   */
  polled(workerId: string, freeSlots: number, instance?: string): string | null {
    const now = this.clock.now();
    if (this.lastPoll.size > 10_000) this.lastPoll.clear();
    this.lastPoll.set(workerId, { free: freeSlots, at: now, reportedAt: null });
    return instance === undefined ? null : this.instances.polled(workerId, instance, now);
  }

  /**
   * A report that ends one of the worker's tasks (a complete, a failure, a release): it frees a
   * slot, and the worker polls again at once with it. Until then its last poll's "no free slot" is
   * stale, and a healthy worker between its report and its next poll read stuck (9 of 748 samples
   * of a worker running 150 ms tasks back to back, a tester). A release of code that keeps its slot
   * (a cancel it ignored) brings no poll: REPORT_SETTLE_MS later the worker reads stuck again.
   */
  reported(workerId: string): void {
    const poll = this.lastPoll.get(workerId);
    if (poll !== undefined) poll.reportedAt = this.clock.now();
  }

  /** No free slot at its last poll, and no report since that would free one (reported()). */
  private full(workerId: string, now: number): boolean {
    if (this.freeSlots(workerId, now) !== 0) return false;
    const reportedAt = this.lastPoll.get(workerId)?.reportedAt ?? null;
    return reportedAt === null || now - reportedAt >= REPORT_SETTLE_MS;
  }

  /** The worker says it is leaving (Worker.close()): it is gone now, not a minute after its last poll. */
  async left(workerId: string): Promise<void> {
    this.written.delete(workerId);
    this.lastPoll.delete(workerId);
    await this.store.markWorkerLeft(workerId, this.clock.now());
  }

  /**
   * The workers seen in the last hour. With `visible` (a caller's access, docs/security.md), only
   * the workers that run at least one workflow it may see, each with only those workflows and the
   * tasks of only those: nothing about the others, not even a count.
   */
  async list(visible: (workflow: string) => boolean = () => true): Promise<WorkerJson[]> {
    const now = this.clock.now();
    const rows = await this.store.listWorkers(now - LISTED_WORKER_MS);
    const running = await this.store.countLeasedTasks();
    const out: WorkerJson[] = [];
    for (const w of rows) {
      const workflows = w.workflows.filter((f) => visible(f.name));
      if (!workflows.length) continue;
      let tasks = 0;
      let allTasks = 0;
      for (const [workflow, n] of running.get(w.workerId) ?? []) {
        allTasks += n;
        if (visible(workflow)) tasks += n;
      }
      const live = isLive(w, now);
      const free = live && workflows.length === w.workflows.length ? this.freeSlots(w.workerId, now) : null;
      const full = free === 0 && this.full(w.workerId, now);
      out.push({
        worker_id: w.workerId,
        status: live ? "live" : "gone",
        workflows,
        first_seen_at: formatInstant(w.firstSeenMs),
        last_seen_at: formatInstant(w.lastPollMs),
        running_tasks: tasks,
        free_slots: free,
        stuck: full && allTasks === 0,
      });
    }
    return out;
  }

  /** Why a RUNNING execution is not being worked on, or null when a worker holds it (or it ended). */
  async waiting(execution: Execution): Promise<Waiting | null> {
    if (execution.status !== "RUNNING") return null;
    const why = await this.whyWaiting(execution);
    // A cancel left to a worker (its journaled steps to compensate) waits for one as a run does: it
    // said nothing, and the execution stayed RUNNING with no hint that a worker must be started.
    if (why === null || execution.cancelReason === null) return why;
    const label = `${execution.workflow}@${execution.version}`;
    if (why.reason === "no_worker" || why.reason === "no_worker_for_version") {
      const none =
        why.reason === "no_worker" ? `no worker polls workflow ${execution.workflow}` : `no live worker runs ${label}`;
      return {
        reason: why.reason,
        message: `its cancel waits for a worker of ${label} to run the compensations of its journaled steps, and ${none}: start a worker that runs ${label}`,
      };
    }
    return { reason: why.reason, message: `its cancel waits for a worker to run its compensations; ${why.message}` };
  }

  private async whyWaiting(execution: Execution): Promise<Waiting | null> {
    const task = await this.store.getTaskForExecution(execution.executionId);
    if (task === null || task.state !== "pending") return null;
    const now = this.clock.now();
    const label = `${execution.workflow}@${execution.version}`;
    const recent = (await this.store.listWorkers(now - LIVE_WORKER_MS)).filter((w) =>
      w.workflows.some((f) => f.name === execution.workflow),
    );
    const live = recent.filter((w) => isLive(w, now));
    if (live.length === 0) {
      // One that closed a moment ago was seen in the last 60 s: "none seen" was false then.
      const left = Math.max(...recent.map((w) => w.leftMs ?? Number.NEGATIVE_INFINITY));
      const why = Number.isFinite(left)
        ? `the last one left at ${formatInstant(left)}`
        : `none seen in the last ${LIVE_WORKER_MS / 1000} s`;
      return {
        reason: "no_worker",
        message: `no worker polls workflow ${execution.workflow} (${why}): start a worker that runs ${label}`,
      };
    }
    const forVersion = live.filter((w) =>
      w.workflows.some((f) => f.name === execution.workflow && f.version === execution.version),
    );
    if (forVersion.length === 0) {
      // A schedule pinned to this version starts it again whatever "latest" is: deprecating or
      // cancelling does not move it on (the advice below said they would).
      const schedule = execution.scheduleId === null ? null : await this.store.getSchedule(execution.scheduleId);
      if (schedule !== null && schedule.version === execution.version) {
        return {
          reason: "no_worker_for_version",
          message: `no worker polls ${label}, and schedule ${schedule.scheduleId} is pinned to it (its next starts take it too, deprecated or not): run a worker with ${label}, or set the schedule's version to one a worker runs`,
        };
      }
      // Deprecated after this execution started on it: deprecating changes which version the next
      // start takes, not this one, which waits (and blocks an `overlap: skip` schedule) until cancelled.
      const deprecated = (await this.store.getWorkflow(execution.workflow, execution.version))?.deprecatedMs;
      if (deprecated != null) {
        return {
          reason: "no_worker_for_version",
          message: `no worker polls ${label}, which is deprecated: this execution still waits for it; cancel it (orbit cancel ${execution.executionId}) so its schedule goes on with the latest version, or run a worker with ${label}`,
        };
      }
      const versions = [
        ...new Set(live.flatMap((w) => w.workflows.filter((f) => f.name === execution.workflow).map((f) => f.version))),
      ].sort();
      // A newer version is "latest" already (a deploy that replaced the worker while this one was
      // due): only this execution waits, and deprecating changes nothing for it (the advice said it
      // would; a tester's `overlap: skip` schedule skipped every occurrence behind it).
      const latest = (await this.store.listWorkflowVersions(execution.workflow)).find((w) => w.deprecatedMs == null);
      if (latest !== undefined && latest.version !== execution.version) {
        return {
          reason: "no_worker_for_version",
          message: `no worker polls ${label}; live workers run version ${versions.join(", ")}: this execution started on ${execution.version} and waits for a worker of it; cancel it (orbit cancel ${execution.executionId})${execution.scheduleId === null ? "" : ` so its schedule goes on with ${latest.version}`}, or run a worker with ${label}`,
        };
      }
      return {
        reason: "no_worker_for_version",
        message: `no worker polls ${label}; live workers run version ${versions.join(", ")}: deploy a worker with ${label}, or deprecate it so "latest" skips it`,
      };
    }
    if (task.availableMs > now) {
      return {
        reason: "retry_backoff",
        message: `attempt ${task.attempt} waits for its back-off until ${formatInstant(task.availableMs)}`,
      };
    }
    // A worker is heard at least every 20 s: its polls while a slot is free, its heartbeats (5 s)
    // while it runs tasks. One silent for longer is gone (kill -9) or frozen, though still counted
    // live for its minute.
    const lastPoll = Math.max(...forVersion.map((w) => w.lastPollMs));
    if (now - lastPoll > SILENT_POLL_MS) {
      return {
        reason: "queued",
        message: `waiting for a worker: ${forVersion.length} worker(s) seen in the last ${LIVE_WORKER_MS / 1000} s run ${label}, but none was heard from for ${Math.round((now - lastPoll) / 1000)} s (stopped, or its event loop blocked)`,
      };
    }
    return {
      reason: "queued",
      message: `waiting for a free worker: ${forVersion.length} live worker(s) run ${label}${await this.stuckText(forVersion)}`,
    };
  }

  /**
   * The workers among `workers` whose last poll here had no free slot while they hold no task: the
   * code of runs they no longer hold (a cancel it ignored past its grace, a lease it lost) has not
   * returned and keeps their slots. Every tool showed such a worker live and running nothing while
   * the executions waited "for a free worker" for good (a tester's worker, full of runs that hung
   * after their cancel).
   */
  private async stuckText(workers: readonly WorkerRow[]): Promise<string> {
    const stuck = await this.stuck(workers);
    if (stuck.length === 0) return "";
    const ids = stuck.map((w) => w.workerId).join(", ");
    return `; ${stuck.length === 1 ? "worker" : "workers"} ${ids} ${stuck.length === 1 ? "has" : "have"} no free slot yet ${stuck.length === 1 ? "holds" : "hold"} no task: code of runs that has not returned (a cancel it ignored, a lease it lost) keeps the slots; its log names them, and a restart frees them`;
  }

  /** The workers among `workers` whose last poll here had no free slot while they hold no task. */
  async stuck(workers: readonly WorkerRow[]): Promise<WorkerRow[]> {
    const now = this.clock.now();
    const full = workers.filter((w) => this.full(w.workerId, now));
    if (full.length === 0) return [];
    const leased = await this.store.countLeasedTasks();
    return full.filter((w) => ![...(leased.get(w.workerId)?.values() ?? [])].some((n) => n > 0));
  }

  /** The free slots of the worker's last poll here, if that poll is recent enough to tell. */
  private freeSlots(workerId: string, now: number): number | null {
    const poll = this.lastPoll.get(workerId);
    return poll !== undefined && now - poll.at <= SILENT_POLL_MS ? poll.free : null;
  }

  private forgetOld(now: number): void {
    for (const [id, w] of this.written) if (now - w.at > LIVE_WORKER_MS) this.written.delete(id);
  }
}
