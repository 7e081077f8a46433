/**
 * The worker protocol's routes, `/v1/worker/…` (docs/workflows.md § Protocol): long poll, heartbeat,
 * release, and the reports on one task. Registered by the composition root next to buildApp's routes
 * (the app's error handler and validator compiler apply); the lease reaper and the PostgreSQL
 * listener start when the app is ready and stop when it closes.
 */

import type { TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { checkText } from "../domain/body-guard.js";
import type { Clock } from "../domain/clock.js";
import { isOutage, OrbitError } from "../domain/errors.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { checkJsonLimits } from "../domain/json-limits.js";
import { linkedSignal } from "../domain/linked-signal.js";
import { storedError } from "../domain/worker-error.js";
import {
  COMPLETE_MANY_ROUTE,
  COMPLETE_ROUTE,
  type PollRequestJson,
  type StepRequestJson,
} from "../domain/worker-protocol.js";
import type { Executions } from "../engine/executions.js";
import { Notifier } from "../engine/notifier.js";
import { executionToJson } from "../engine/serialize.js";
import type { TaskHandOff } from "../engine/task-hand-off.js";
import { TaskReaper } from "../engine/task-reaper.js";
import type { LeaseHolder } from "../engine/task-transitions.js";
import type { TaskWakeups } from "../engine/task-wakeups.js";
import { WorkerTasks } from "../engine/tasks.js";
import { TimeoutSweeper } from "../engine/timeout-sweeper.js";
import { checkOfferedWorkflows, type Workflows } from "../engine/workflows.js";
import type { Store } from "../store/store.js";
import { workerProtocolRefusal } from "./identity-kind.js";
import { type Caller, type RouteDef, refuseIfMatch, refuseQueryParameters } from "./route.js";
import { Execution } from "./schemas.js";
import { WorkerAccess, type WorkerBody } from "./worker-access.js";
import * as S from "./worker-schemas.js";

export interface WorkerProtocolOptions {
  /** Lease length after each heartbeat. Default 30 000 ms. */
  leaseMs?: number;
  /** Heartbeat interval told to workers. Default 5 000 ms. */
  heartbeatMs?: number;
  /** Longest a poll is held when nothing is available. Default 20 000 ms. */
  pollTimeoutMs?: number;
  /** Run the lease reaper on this server. Default true. */
  reaper?: boolean;
  /** The clock is the host's wall clock (a single server): its forward steps give leases a grace. */
  wallSteps?: boolean;
}

export interface WorkerRouteDeps {
  store: Store;
  clock: Clock;
  executions: Executions;
  workflows: Workflows;
  /** The instance Executions' `onTaskQueued` wakes (and the listener's `onNotify`). */
  wakeups: TaskWakeups;
  /** The instance Executions hands new tasks to (task-hand-off.ts); absent: polls only claim. */
  handOff?: TaskHandOff;
  /** The caller of a request (throws UNAUTHENTICATED); absent or null: open server. */
  authenticate?: (request: FastifyRequest) => Caller | null;
  /** Whether a worker identity may lease and report tasks of a workflow (its `allow` rules). */
  mayWork?: (caller: Caller, workflow: string) => boolean;
  /** PostgreSQL: the LISTEN connection (PostgresTaskListener) waking `wakeups`. Default none. */
  listener?: { start(): Promise<void>; close(): Promise<void> };
  options?: WorkerProtocolOptions;
  log?: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void };
  /** The webhook sender's and the timeout sweeper's own loggers (their lines said worker-tasks). Default `log`. */
  notifierLog?: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void };
  sweeperLog?: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void };
  /** A webhook delivery given up after its last attempt (the metric). */
  onNotifyFailed?: () => void;
}

export interface WorkerProtocol {
  tasks: WorkerTasks;
  reaper: TaskReaper | null;
  /** The routes as OpenAPI entries (add them to the app's route table before the document is built). */
  documented: RouteDef[];
}

type Body<T> = T & { worker_id: string };

export function registerWorkerRoutes(app: FastifyInstance, d: WorkerRouteDeps): WorkerProtocol {
  const o = d.options ?? {};
  const tasks = new WorkerTasks({
    store: d.store,
    clock: d.clock,
    executions: d.executions,
    workflows: d.workflows,
    wakeups: d.wakeups,
    ...(d.handOff !== undefined ? { handOff: d.handOff } : {}),
    ...(o.leaseMs !== undefined ? { leaseMs: o.leaseMs } : {}),
    ...(o.heartbeatMs !== undefined ? { heartbeatMs: o.heartbeatMs } : {}),
    ...(o.pollTimeoutMs !== undefined ? { pollTimeoutMs: o.pollTimeoutMs } : {}),
    ...(d.log ? { log: d.log } : {}),
  });
  // A worker request failed for want of the database: the reaper gives the leases a grace. Not a
  // transaction PostgreSQL aborted to let another go on (a deadlock: the next heartbeat lands), whose
  // 503 extended every lease, dead workers' too.
  const outages = { count: 0 };
  const reaper =
    o.reaper === false
      ? null
      : new TaskReaper({
          store: d.store,
          clock: d.clock,
          tasks,
          outages,
          ...(d.log ? { log: d.log } : {}),
          ...(o.wallSteps === true ? { wallSteps: true } : {}),
        });
  const sweeper =
    o.reaper === false
      ? null
      : new TimeoutSweeper({
          store: d.store,
          clock: d.clock,
          executions: d.executions,
          // A timeout's cancel is for the worker holding the run: its parked poll asks it to heartbeat.
          onChanged: () => {
            d.wakeups.wake();
            d.handOff?.nudge();
          },
          ...((d.sweeperLog ?? d.log) ? { log: d.sweeperLog ?? d.log } : {}),
        });
  const notifier =
    o.reaper === false
      ? null
      : new Notifier({
          store: d.store,
          clock: d.clock,
          secret: process.env.ORBIT_NOTIFY_SECRET || null,
          ...((d.notifierLog ?? d.log) ? { log: d.notifierLog ?? d.log } : {}),
          ...(d.onNotifyFailed ? { onGiveUp: d.onNotifyFailed } : {}),
        });
  const closing = new AbortController();

  app.addHook("onReady", async () => {
    reaper?.start();
    sweeper?.start();
    notifier?.start();
    await d.listener?.start();
  });
  // Held polls answer at once (with no task) so that closing does not wait for their timeout.
  app.addHook("preClose", async () => closing.abort());
  app.addHook("onClose", async () => {
    await reaper?.close();
    await sweeper?.close();
    await notifier?.close();
    await d.listener?.close();
  });

  const guard = (request: FastifyRequest): Caller | null => {
    const caller = d.authenticate?.(request) ?? null;
    if (caller !== null && caller.kind !== "worker") throw workerProtocolRefusal(caller.name);
    return caller;
  };
  const workerAccess = new WorkerAccess(d.store, d.mayWork ?? (() => false), () => d.clock.now());
  const documented: RouteDef[] = [];
  const route = <B>(
    url: string,
    schema: { body: TSchema; params?: TSchema },
    answer: TSchema | null,
    handler: (body: Body<B>, taskId: string, holder: LeaseHolder, reply: FastifyReply) => Promise<unknown>,
  ): void => {
    documented.push({
      method: "POST",
      url,
      summary: `worker protocol: ${url.split("/").pop()}`,
      tag: "worker",
      // Reports are made safe to repeat by their leases, not by keys: no Idempotency-Key is read.
      idempotent: false,
      ...(schema.params ? { params: schema.params } : {}),
      body: schema.body,
      responses:
        answer === null
          ? { 204: { description: "done; nothing to say" } }
          : { 200: { description: "the answer (docs/workflows.md § Protocol)", schema: answer } },
      handler: () => Promise.reject(new Error("documentation only")),
    });
    app.route({
      method: "POST",
      url,
      schema,
      handler: async (request, reply) => {
        // When the worker spoke: its lease is judged by this, not by when the database let the
        // server get to it (docs/workflows.md § Leases).
        const heardMs = d.clock.now();
        try {
          return await respond(request, reply, heardMs);
        } catch (err) {
          if (isOutage(err)) {
            outages.count++;
            // Its worker is alive, though nothing of it could be written (task-reaper.ts).
            const taskId = (request.params as { task_id?: string } | undefined)?.task_id ?? "";
            reaper?.heardWhileAway(reportedTasks(taskId, request.body), heardMs);
          }
          throw err;
        }
      },
    });
    async function respond(request: FastifyRequest, reply: FastifyReply, heardMs: number): Promise<unknown> {
      const caller = guard(request);
      // The rules of every other API route (route.ts): no query parameters, no If-Match.
      refuseQueryParameters({ method: "POST", url }, request.query);
      refuseIfMatch({ method: "POST", url }, request.headers["if-match"]);
      const taskId = (request.params as { task_id?: string }).task_id ?? "";
      // With identities, a worker touches only tasks of the workflows its rules name, and reports
      // only on leases its identity took (docs/security.md).
      if (caller !== null)
        await workerAccess.check(
          caller,
          request.body as WorkerBody,
          taskId,
          url === POLL_ROUTE ? "poll" : NAMES_WORKER.has(url),
        );
      // A lease that lapsed while this server could not hear its workers is extended before this
      // request judges it (task-reaper.ts graceIfOwed), not only at the reaper's next pass.
      if (url !== POLL_ROUTE) await reaper?.graceIfOwed();
      const b = request.body as Body<B>;
      // A report that ends a task frees a slot: the worker is not stuck until it polls again (workers.ts).
      if (FREES_A_SLOT.has(url) && typeof b.worker_id === "string") d.executions.workers.reported(b.worker_id);
      const attempt = (b as { attempt?: number }).attempt;
      const holder = {
        workerId: b.worker_id,
        identity: caller?.name ?? null,
        heardMs,
        ...(attempt !== undefined ? { attempt } : {}),
      };
      // The tasks this report is about: the reaper leaves them to it while it is handled (tasks.ts).
      const named = reportedTasks(taskId, b);
      const body = await (named.length === 0
        ? handler(b, taskId, holder, reply)
        : tasks.whileReporting(named, () => handler(b, taskId, holder, reply)));
      return body === undefined ? reply.code(204).send() : reply.code(200).send(body);
    }
  };

  /**
   * Each worker's polls in progress. Its leave (Worker.close()) answers them at once, with what they
   * were handed: the worker releases that. Before, close() gave up its poll on its own side, and a
   * task the server handed it at that moment was lost until its lease ran out (a tester: 30 s, and
   * a second attempt).
   */
  const polling = new Map<string, Set<AbortController>>();
  route<PollRequestJson>(POLL_ROUTE, { body: S.PollBody }, S.PollAnswer, async (body, _id, holder, reply) => {
    checkOfferedWorkflows(body.workflows);
    // Versions the database lost under the running worker (replaced, restored): it registers them again.
    const unregistered = await d.workflows.unregistered(body.workflows);
    const register = unregistered.length > 0 ? { unregistered } : {};
    // A worker that goes away (closed, killed) ends its poll; so does the server closing.
    const gone = new AbortController();
    reply.raw.on("close", () => gone.abort());
    const left = new AbortController();
    const mine = polling.get(holder.workerId) ?? new Set<AbortController>();
    polling.set(holder.workerId, mine.add(left));
    let nudged = false;
    let claimed: Awaited<ReturnType<typeof tasks.poll>>;
    // Not AbortSignal.any: on Node 20 it left an entry in the server's closing signal per poll (linked-signal.ts).
    const stop = linkedSignal([gone.signal, closing.signal, left.signal]);
    try {
      claimed = await tasks.poll(body, stop.signal, holder.identity, () => {
        nudged = true;
      });
    } finally {
      stop.release();
      mine.delete(left);
      if (mine.size === 0 && polling.get(holder.workerId) === mine) polling.delete(holder.workerId);
    }
    if (gone.signal.aborted && claimed.length) {
      await tasks.release(
        holder,
        claimed.map((t) => t.task_id),
      );
      return { tasks: [], ...register };
    }
    return nudged ? { tasks: claimed, heartbeat: true, ...register } : { tasks: claimed, ...register };
  });
  route<{ task_ids: string[] }>(
    "/v1/worker/heartbeat",
    { body: S.HeartbeatBody },
    S.HeartbeatAnswer,
    (b, _id, holder) => tasks.heartbeat(holder, b.task_ids),
  );
  route<{ task_ids: string[] }>(
    "/v1/worker/release",
    { body: S.ReleaseBody },
    S.ReleaseAnswer,
    async (b, _id, holder) => ({
      released: await tasks.release(holder, b.task_ids),
    }),
  );

  // The worker closes (a deploy, SIGTERM): it is gone now, so a waiting execution says no worker
  // polls its workflow instead of "waiting for a free worker" for the next minute.
  route(LEAVE_ROUTE, { body: S.LeaveBody }, null, async (_b, _id, holder) => {
    for (const poll of polling.get(holder.workerId) ?? []) poll.abort();
    await tasks.leave(holder);
  });

  route<{ tasks: { task_id: string; result?: unknown; attempt?: number }[] }>(
    COMPLETE_MANY_ROUTE,
    { body: S.CompleteManyBody },
    S.CompleteManyAnswer,
    async (b, _id, holder, reply) => {
      checkText(b.worker_id, "worker_id");
      // One report per task: the second of a repeated id was answered CONFLICT after the first had
      // completed it, so the worker heard its completion failed.
      const seen = new Set<string>();
      for (const [i, t] of b.tasks.entries()) {
        checkText(t.task_id, `tasks[${i}].task_id`);
        if (seen.has(t.task_id)) throw new OrbitError("INVALID_ARGUMENT", `tasks: task ${t.task_id} appears twice`);
        seen.add(t.task_id);
      }
      // Each result is checked as the single-task route checks it (docs/workflows.md § Protocol):
      // one Orbit cannot store fails its own execution, the others complete.
      const chars = unstorableIn(reply) !== undefined;
      const refused: { task: (typeof b.tasks)[number]; error: OrbitError }[] = [];
      const kept: typeof b.tasks = [];
      for (const t of b.tasks) {
        const error = resultRefusal(t.result ?? null, chars);
        if (error === null) kept.push(t);
        else refused.push({ task: t, error });
      }
      const answers = kept.length
        ? await tasks.completeMany(
            holder,
            kept.map((t) => ({
              task_id: t.task_id,
              result: (t.result ?? null) as JsonValue,
              ...(t.attempt !== undefined ? { attempt: t.attempt } : {}),
            })),
          )
        : {};
      for (const { task, error } of refused) {
        const own = { ...holder, ...(task.attempt !== undefined ? { attempt: task.attempt } : {}) };
        answers[task.task_id] = await failRefused(task.task_id, own, error).then(
          () => ({ code: "INVALID_ARGUMENT", message: `${error.message}; the execution failed with this error` }),
          (err: unknown) => {
            if (err instanceof OrbitError) return { code: err.code, message: err.message };
            throw err;
          },
        );
      }
      return { tasks: answers };
    },
  );
  /** A result Orbit cannot store: the attempt fails with the reason, rather than leaving it RUNNING (docs/security.md). */
  const failRefused = (taskId: string, holder: LeaseHolder, refused: OrbitError) =>
    tasks.fail(taskId, holder, { message: refused.message, type: "ResultRefused" }, false);
  const task = { params: S.TaskIdParams };
  route<StepRequestJson>(
    "/v1/worker/tasks/:task_id/steps",
    { ...task, body: S.StepBody },
    S.StepAnswer,
    (b, id, holder) => {
      checkJsonLimits(b.result ?? null, `the result of step ${b.step}`);
      return tasks.step(id, holder, { ...b, result: (b.result ?? null) as JsonValue });
    },
  );
  route<{ result?: unknown }>(
    COMPLETE_ROUTE,
    { ...task, body: S.CompleteBody },
    Execution,
    async (b, id, holder, reply) => {
      checkText(b.worker_id, "worker_id");
      const refused = resultRefusal(b.result ?? null, unstorableIn(reply) !== undefined);
      if (refused !== null) {
        // Results obey the inputs' limits (1 MB, 64 levels): the attempt fails with the reason
        // rather than leaving the execution RUNNING (docs/security.md).
        await failRefused(id, holder, refused);
        throw new OrbitError("INVALID_ARGUMENT", `${refused.message}; the execution failed with this error`);
      }
      return executionToJson(await tasks.complete(id, holder, (b.result ?? null) as JsonValue));
    },
  );
  route<{ error: JsonObject; retryable: boolean }>(
    "/v1/worker/tasks/:task_id/fail",
    { ...task, body: S.FailBody },
    Execution,
    async (b, id, holder) => {
      checkText(b.worker_id, "worker_id");
      return executionToJson(await tasks.fail(id, holder, storedError(b.error), b.retryable));
    },
  );
  route<{ input?: unknown }>(
    "/v1/worker/tasks/:task_id/continue",
    { ...task, body: S.ContinueBody },
    Execution,
    // Left out: the empty object. An explicit null is refused, as a start refuses it.
    async (b, id, holder) =>
      executionToJson(await tasks.continueAsNew(id, holder, b.input === undefined ? {} : b.input)),
  );
  route<object>(
    "/v1/worker/tasks/:task_id/compensating",
    { ...task, body: S.WorkerOnlyBody },
    S.TaskAnswer,
    (_b, id, holder) => tasks.startCompensating(id, holder),
  );
  route<{ step: string; error?: JsonObject }>(
    "/v1/worker/tasks/:task_id/compensations",
    { ...task, body: S.CompensationBody },
    null,
    async (b, id, holder) => {
      checkText(b.worker_id, "worker_id");
      checkText(b.step, "step");
      await tasks.compensated(id, holder, b.step, b.error === undefined ? null : storedError(b.error));
      return undefined;
    },
  );
  route<{ error?: JsonObject }>(
    "/v1/worker/tasks/:task_id/cancelled",
    { ...task, body: S.CancelledBody },
    Execution,
    async (b, id, holder) => {
      checkText(b.worker_id, "worker_id");
      return executionToJson(await tasks.cancelled(id, holder, b.error === undefined ? null : storedError(b.error)));
    },
  );
  return { tasks, reaper, documented };
}

const LEAVE_ROUTE = "/v1/worker/leave";
/** The reports that end a task on the worker's side (not a heartbeat, a step or a compensation's). */
const FREES_A_SLOT: ReadonlySet<string> = new Set([
  "/v1/worker/release",
  COMPLETE_MANY_ROUTE,
  COMPLETE_ROUTE,
  "/v1/worker/tasks/:task_id/fail",
  "/v1/worker/tasks/:task_id/continue",
  "/v1/worker/tasks/:task_id/cancelled",
]);
const POLL_ROUTE = "/v1/worker/poll";
/**
 * Routes that say something about the worker they name (gone; still alive; what it polls): see
 * WorkerAccess.check.
 */
const NAMES_WORKER: ReadonlySet<string> = new Set([LEAVE_ROUTE, "/v1/worker/heartbeat", POLL_ROUTE]);

/** A NUL or lone surrogate somewhere in the body (app.ts let it through for a lenient route). */
const unstorableIn = (reply: FastifyReply): string | undefined =>
  (reply.request as FastifyRequest & { unstorable?: string }).unstorable;

/**
 * Why Orbit cannot store `result` (not plain JSON, over 1 MB or 64 levels, or, when the body held
 * such a character, a NUL or lone surrogate in one of its strings or keys), or null.
 */
function resultRefusal(result: unknown, chars: boolean): OrbitError | null {
  try {
    checkJsonLimits(result, "result");
    if (chars) checkChars(result, "a string of the result");
    return null;
  } catch (err) {
    if (err instanceof OrbitError) return err;
    throw err;
  }
}

/** Throws for a NUL or lone surrogate in a string or key of `value` (plain JSON, at most 64 levels deep). */
function checkChars(value: unknown, what: string): void {
  if (typeof value === "string") checkText(value, what);
  else if (Array.isArray(value)) for (const v of value) checkChars(v, what);
  else if (value !== null && typeof value === "object")
    for (const [key, v] of Object.entries(value)) {
      checkText(key, what);
      checkChars(v, what);
    }
}

/** The task ids a worker request reports on: its path's, a heartbeat's or release's list, a batch's. */
export function reportedTasks(taskId: string, body: unknown): string[] {
  if (taskId !== "") return [taskId];
  const b = body as { task_ids?: unknown; tasks?: unknown };
  if (Array.isArray(b.task_ids)) return b.task_ids.filter((id): id is string => typeof id === "string");
  if (Array.isArray(b.tasks)) {
    return b.tasks.flatMap((t: unknown) => {
      const id = (t as { task_id?: unknown } | null)?.task_id;
      return typeof id === "string" ? [id] : [];
    });
  }
  return [];
}
