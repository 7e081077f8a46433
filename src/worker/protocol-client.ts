/**
 * The worker's side of the HTTP protocol (docs/workflows.md § Protocol), over src/client/http.ts.
 * Reports retry while the server cannot be reached (a restart, a network blip) or answers 503
 * `UNAVAILABLE` (its database restarting or failing over) until `retryForMs`, so an outcome is not
 * lost to an outage and the run repeated after its lease; a 409 on a task means the lease is gone
 * and becomes {@link LeaseLostError}.
 */

import { randomUUID } from "node:crypto";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { type HttpOptions, request, ServerUnreachableError } from "../client/http.js";
import type { RegisterWorkflowBody } from "../client/types.js";
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { withLinkedSignal } from "../domain/linked-signal.js";
import {
  type CompleteManyResponseJson,
  type HeartbeatResponseJson,
  MAX_TASK_IDS,
  type PollRequestJson,
  type PollResponseJson,
  type TaskJson,
} from "../domain/worker-protocol.js";
import { pausedMeanwhile } from "./blocking.js";
import { Completions } from "./completions.js";
import { LeaseLostError } from "./errors.js";

/** The task a report is about: its id and the attempt this worker runs. */
export interface TaskRef {
  task_id: string;
  attempt: number;
}

export interface ProtocolClientOptions {
  server: string;
  token?: string | null;
  workerId: string;
  clock: Clock;
  /** Aborts held polls (closing). */
  signal: AbortSignal;
  /** Stops the retries of reports (the worker abandoned what still ran, Worker.close). */
  giveUp?: AbortSignal;
  /** A poll's answer is awaited its hold and this much more (default 10 s). */
  pollAnswerMarginMs?: number;
}

/**
 * How long a task's report is sent again while the server cannot take it (unreachable, or 503 with
 * its database away): until it lands or the worker gives up on closing. The server keeps the lease
 * through its own outage (src/engine/task-reaper.ts), so a report that lands late still counts,
 * and the finished run is not run again by another attempt (docs/workflows.md § Leases).
 */
export const UNTIL_GIVEN_UP = Number.POSITIVE_INFINITY;
/** How long a worker's poll asks the server to hold it when no task is there. */
export const POLL_WAIT_MS = 20_000;
/** A poll's answer is awaited its hold and this much more. */
const POLL_ANSWER_MARGIN_MS = 10_000;
/**
 * The first and the longest wait between two tries of a request the server could not take. The
 * longest was 5 s: a run that finished during a database outage stayed RUNNING up to 5 s after the
 * database was back, and a 1 s `skip` schedule skipped five more occurrences for it (a tester).
 */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 2000;

const seg = encodeURIComponent;

/** A kept-alive agent of node:http or node:https, by the server's scheme. */
function keepAliveAgent(baseUrl: string): HttpAgent {
  return baseUrl.startsWith("https:") ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
}

export class ProtocolClient {
  private readonly http: HttpOptions;
  private readonly pollHttp: HttpOptions;
  private readonly completions = new Completions(this);
  private readonly agent: HttpAgent;
  private readonly beatAgent: HttpAgent;

  constructor(private readonly o: ProtocolClientOptions) {
    const baseUrl = o.server.replace(/\/+$/, "");
    // node:http on kept-alive connections, not fetch: about half the worker's CPU per execution
    // and no undici loaded, 10–20 MB less RSS (docs/benchmarks.md § Memory at S = 10,000 (issue 15)).
    // Idle sockets do not hold the process open, and close at the server's Keep-Alive hint.
    this.agent = keepAliveAgent(baseUrl);
    // Heartbeats on connections of their own: a request that got no answer (a connection gone
    // silent) is given up in time for the next one to renew the leases (see heartbeat).
    this.beatAgent = keepAliveAgent(baseUrl);
    this.http = { baseUrl, token: o.token ?? null, agent: this.agent };
    this.pollHttp = { ...this.http, signal: o.signal };
  }

  /** Closes the kept-alive connections (the worker has closed). */
  close(): void {
    this.agent.destroy();
    this.beatAgent.destroy();
  }

  /**
   * A request got no answer in time: the kept-alive connections idle beside it may be as dead (a
   * NAT or firewall that dropped them, a network that went silent) and the next requests would
   * wait on them one by one. They are closed, so the next requests open fresh ones.
   */
  private noAnswer(err: unknown, agent: HttpAgent): void {
    if (!(err instanceof ServerUnreachableError) || !err.unanswered) return;
    for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  }

  get workerId(): string {
    return this.o.workerId;
  }

  /**
   * This process's id on its polls (`instance`, made once per Worker): its leases record it, so the
   * redelivery after a lost poll answer (`held`) hands this process its own tasks only, never those
   * of another process sharing its worker id. Null once a server from before it refused the field.
   */
  get instance(): string | null {
    if (this.instanceRefusedAt !== null && this.o.clock.now() - this.instanceRefusedAt >= INSTANCE_ASK_AGAIN_MS) {
      this.instanceRefusedAt = null;
    }
    return this.instanceRefusedAt === null ? this.instanceId : null;
  }

  private readonly instanceId = randomUUID();
  /**
   * When a server from before `instance` refused it; the field is offered again
   * {@link INSTANCE_ASK_AGAIN_MS} later (the same id), so that a worker that met an old server
   * during a rolling upgrade regains the per-process redelivery once the roll is over: it dropped
   * the field for good, and kept neither `held` nor the shared-id warning until restarted (a tester).
   */
  private instanceRefusedAt: number | null = null;

  /** `signal` also ends it (as closing does): a busy worker's watch poll when a slot frees. */
  async poll(body: Omit<PollRequestJson, "worker_id">, signal?: AbortSignal): Promise<PollResponseJson> {
    // The hold asked for, and an answer awaited that long and 10 s more: a poll whose connection
    // went silent waited 90 s, and its worker took no work meanwhile (a tester's black hole).
    const waitMs = body.wait_ms ?? POLL_WAIT_MS;
    const instance = this.instance;
    const sentAt = performance.now();
    const ask = (http: HttpOptions) =>
      request<PollResponseJson>(
        { ...http, timeoutMs: waitMs + (this.o.pollAnswerMarginMs ?? POLL_ANSWER_MARGIN_MS) },
        {
          method: "POST",
          path: "/v1/worker/poll",
          body: { worker_id: this.o.workerId, ...body, ...(instance === null ? {} : { instance }), wait_ms: waitMs },
        },
      ).then(
        (res) => res.body,
        (err: unknown) => {
          this.noAnswer(err, this.agent);
          throw pausedMeanwhile(err, sentAt);
        },
      );
    try {
      if (signal === undefined) return await ask(this.pollHttp);
      // Not AbortSignal.any: on Node 20 it left an entry in the worker's signal per poll (linked-signal.ts).
      return await withLinkedSignal([this.o.signal, signal], (s) => ask({ ...this.pollHttp, signal: s }));
    } catch (err) {
      if (instance === null || !refusesField(err, "instance")) throw err;
      // A server from before `instance` (unknown field; a 400 leased nothing): asked again at once
      // without it, and without `held` too until it is offered again (INSTANCE_ASK_AGAIN_MS), since
      // without an instance that could hand this process the tasks of another under the same worker
      // id (LostPolls.held).
      this.instanceRefusedAt = this.o.clock.now();
      const { held: _held, ...rest } = body;
      return this.poll(rest, signal);
    }
  }

  /**
   * POST /v1/workflows, as OrbitClient.registerWorkflow but on this client's connections; `signal`
   * ends it (the worker closing: a registration to a stalled server held close() 15 s).
   */
  async registerWorkflow(body: RegisterWorkflowBody, signal?: AbortSignal): Promise<void> {
    await request(signal === undefined ? this.http : { ...this.http, signal }, {
      method: "POST",
      path: "/v1/workflows",
      body,
    });
  }

  /**
   * Renews the leases of `taskIds`, in requests of at most the server's 1,000 ids each. `timeoutMs`
   * bounds each: a heartbeat on a connection gone silent waited the default 30 s, the lease's
   * length, so a live worker lost its leases and a finished step ran again (a tester).
   */
  async heartbeat(taskIds: string[], timeoutMs?: number): Promise<HeartbeatResponseJson> {
    const answers = await Promise.all(
      chunks(taskIds).map((ids) =>
        this.post<HeartbeatResponseJson>("/v1/worker/heartbeat", { task_ids: ids }, 0, timeoutMs, this.beatAgent),
      ),
    ).catch((err: unknown) => {
      this.noAnswer(err, this.beatAgent);
      this.noAnswer(err, this.agent);
      throw err;
    });
    return { tasks: Object.assign({}, ...answers.map((a) => a.tasks)) };
  }

  /** Hands tasks back, one try; `timeoutMs` bounds it (the worker's close: a stalled server held it 30 s). */
  async release(taskIds: string[], timeoutMs?: number): Promise<void> {
    await Promise.all(chunks(taskIds).map((ids) => this.post("/v1/worker/release", { task_ids: ids }, 0, timeoutMs)));
  }

  /** Tells the server this worker polls no more (its close()): it is listed gone at once. One try, 5 s at most. */
  async leave(): Promise<void> {
    await request(
      { ...this.http, timeoutMs: 5000 },
      { method: "POST", path: "/v1/worker/leave", body: { worker_id: this.o.workerId } },
    );
  }

  step(
    task: TaskRef,
    step: { step: string; seq: number; result: JsonValue; compensable: boolean },
    retryForMs: number,
  ): Promise<{ cancel_requested: string | null }> {
    return this.report(task, "steps", step, retryForMs);
  }

  /**
   * Batched with other tasks completing at the same time (completions.ts). Resolves with null once
   * COMPLETED, or with the cancel reason when a cancel was requested first (then compensate).
   */
  complete(
    task: TaskRef,
    result: JsonValue,
    retryForMs: number,
    bytes = Buffer.byteLength(JSON.stringify(result)),
  ): Promise<string | null> {
    return this.completions.complete(task, result, retryForMs, bytes);
  }

  /** One request, one transaction: per task COMPLETED or the error that refused it. */
  completeMany(
    tasks: { task_id: string; attempt?: number; result: JsonValue }[],
    retryForMs: number,
  ): Promise<CompleteManyResponseJson> {
    return this.post("/v1/worker/complete", { tasks }, retryForMs);
  }

  /** The execution after the report: RUNNING (retried, or a cancel came first: cancel_reason), or FAILED. */
  fail(
    task: TaskRef,
    error: JsonObject,
    retryable: boolean,
    retryForMs: number,
  ): Promise<{ status?: string; cancel_reason?: string | null } | null> {
    return this.report(task, "fail", { error, retryable }, retryForMs);
  }

  /** The execution: RUNNING with run + 1, or RUNNING with `cancel_reason` when a cancel came first (compensate). */
  continueAsNew(
    task: TaskRef,
    input: JsonValue,
    retryForMs: number,
  ): Promise<{ status?: string; cancel_reason?: string | null } | null> {
    return this.report(task, "continue", { input }, retryForMs);
  }

  compensating(task: TaskRef, retryForMs: number): Promise<TaskJson> {
    return this.report(task, "compensating", {}, retryForMs);
  }

  compensation(task: TaskRef, step: string, error: JsonObject | null, retryForMs: number): Promise<unknown> {
    return this.report(task, "compensations", error === null ? { step } : { step, error }, retryForMs);
  }

  cancelled(task: TaskRef, error: JsonObject | null, retryForMs: number): Promise<unknown> {
    return this.report(task, "cancelled", error === null ? {} : { error }, retryForMs);
  }

  /**
   * A report on one task, naming its attempt: when this worker leased the task again after the
   * server lost the first lease (an outage longer than the lease), a late report of the first
   * attempt is refused rather than taken for the second's (docs/workflows.md § Leases).
   */
  private report<T>(task: TaskRef, what: string, body: object, retryForMs: number): Promise<T> {
    return this.post(`/v1/worker/tasks/${seg(task.task_id)}/${what}`, { attempt: task.attempt, ...body }, retryForMs);
  }

  /** POSTs `body` with this worker's id, tried again while it may succeed, for up to `retryForMs`; `timeoutMs` bounds each try. */
  private async post<T>(
    path: string,
    body: object,
    retryForMs: number,
    timeoutMs?: number,
    agent: HttpAgent = this.agent,
  ): Promise<T> {
    const until = this.o.clock.now() + retryForMs;
    let wait = RETRY_FIRST_MS;
    // A try that got no answer may have been handled: a refusal of the next one may be its effect.
    let answerLost = false;
    // So may one answered 503: the server's database may have committed it with its answer lost.
    let answered503 = false;
    // Given up (the worker's close abandoned what still ran): a request in flight ends too, or a
    // heartbeat to a stalled server held close() for its 30 s timeout (a tester).
    const http = {
      ...this.http,
      agent,
      ...(this.o.giveUp === undefined ? {} : { signal: this.o.giveUp }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    };
    for (;;) {
      try {
        const res = await request<T>(http, {
          method: "POST",
          path,
          body: { worker_id: this.o.workerId, ...body },
        });
        return res.body;
      } catch (err) {
        if (err instanceof OrbitError && err.code === "CONFLICT" && path.startsWith("/v1/worker/tasks/")) {
          throw new LeaseLostError(err.message, answerLost, answered503);
        }
        if (!isRetryable(err) || this.o.clock.now() >= until || this.o.giveUp?.aborted) throw err;
        if (err instanceof ServerUnreachableError && err.reason !== "ECONNREFUSED") answerLost = true;
        if (err instanceof OrbitError) answered503 = true;
        await this.o.clock.sleep(wait, this.o.giveUp);
        // Given up while waiting: the last answer is the report's, not a try cut short at once.
        if (this.o.giveUp?.aborted) throw err;
        wait = Math.min(RETRY_MAX_MS, wait * 2);
      }
    }
  }
}

/** The server could not be reached, or could not reach its database: the same report may succeed shortly. */
export function isRetryable(err: unknown): boolean {
  // A redirect is the address's mistake, as a refused token is: run() rejects (it retried every
  // second until close, a tester).
  if (err instanceof ServerUnreachableError) return !err.redirected;
  return err instanceof OrbitError && err.code === "UNAVAILABLE";
}

/**
 * `ids` in pieces the server takes: a worker whose concurrency is above 1,000 runs more tasks than
 * one heartbeat may name, and one refused heartbeat would let every lease run out.
 */
function chunks(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += MAX_TASK_IDS) out.push(ids.slice(i, i + MAX_TASK_IDS));
  return out;
}

/** How long after an old server refused `instance` the polls offer it again (one refused poll, asked again at once). */
export const INSTANCE_ASK_AGAIN_MS = 60_000;

/** A 400 that names `field` as the body's unknown key (a server from before it). */
export function refusesField(err: unknown, field: string): boolean {
  return err instanceof OrbitError && err.code === "INVALID_ARGUMENT" && err.message.includes(`"${field}"`);
}
