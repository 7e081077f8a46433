/**
 * Which tasks a worker identity may touch (docs/security.md): a worker identity's `allow` rules
 * name the workflows it runs, and every worker route is checked against them: the workflows a poll
 * offers, and the workflow of every task a heartbeat, release, report or batched complete names.
 * Without this, a worker trusted with `Order*` could lease `Billing` tasks (and read their inputs)
 * or complete them with a forged result. A leased task is also refused to any identity but the one
 * that took the lease: a `worker_id` is the worker's own choice, so without this two identities
 * allowed the same workflow could report on each other's leases (the same check is made again
 * under the task's lock, task-transitions.ts `holdTask`). A task that does not exist is left to
 * the route (404). A leave, a heartbeat or a poll is refused to an identity that may not run
 * every workflow the worker it names polls, while that worker is live: a poll may take over the
 * `worker_id` of one gone (left, or silent past LIVE_WORKER_MS). Else an identity that polled under
 * another team's id first (a pod's name) locked that team's worker out for good (a tester).
 */
import { OrbitError } from "../domain/errors.js";
import { identityRefusal } from "../engine/task-transitions.js";
import { isLive } from "../engine/workers.js";
import type { Store } from "../store/store.js";
import type { Caller } from "./route.js";

/** The fields of a worker route's body this check reads. */
export interface WorkerBody {
  workflows?: { name?: unknown }[];
  task_ids?: unknown[];
  /** A batched complete's tasks (`POST /v1/worker/complete`). */
  tasks?: { task_id?: unknown }[];
  worker_id?: unknown;
}

export class WorkerAccess {
  constructor(
    private readonly store: Store,
    private readonly mayWork: (caller: Caller, workflow: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** `namesWorker`: a leave, heartbeat or poll (`"poll"`, which may take over a gone worker's id). */
  async check(
    caller: Caller,
    body: WorkerBody | undefined,
    taskId: string,
    namesWorker: boolean | "poll" = false,
  ): Promise<void> {
    for (const w of body?.workflows ?? []) this.require(caller, String(w.name), "lease tasks of");
    if (namesWorker && typeof body?.worker_id === "string") {
      // A leave marks the worker gone, a heartbeat keeps it live, a poll rewrites what it polls:
      // only an identity that may run all it polls may do any, or one identity could make
      // another's live worker look gone (and its executions "no worker"), or a dead one look live.
      const worker = await this.store.getWorker(body.worker_id);
      const takeover = namesWorker === "poll" && worker !== null && !isLive(worker, this.now());
      for (const w of takeover ? [] : (worker?.workflows ?? []))
        this.require(caller, w.name, `speak for worker ${body.worker_id}, which runs`);
    }
    const ids = [
      ...(body?.task_ids ?? []).map(String),
      ...(body?.tasks ?? []).map((t) => String(t?.task_id)),
      ...(taskId === "" ? [] : [taskId]),
    ];
    for (const id of ids) {
      const task = await this.store.getTaskLease(id);
      if (task === null) continue;
      this.require(caller, task.workflow, `report on task ${id} of`);
      const otherIdentity = identityRefusal(id, task, caller.name);
      if (otherIdentity !== null) throw otherIdentity;
    }
  }

  private require(caller: Caller, workflow: string, what: string): void {
    if (this.mayWork(caller, workflow)) return;
    throw new OrbitError(
      "PERMISSION_DENIED",
      `worker identity ${caller.name} may not ${what} workflow ${JSON.stringify(workflow)}: no rule of its allow list names it`,
    );
  }
}
