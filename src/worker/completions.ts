/**
 * Batched completes (docs/workflows.md § Batched completes): the worker's finished tasks go to the
 * server together, one request and one transaction for all of them. Nothing waits to fill a batch:
 * the first completion is sent on the next turn of the event loop with whatever else finished in
 * the same turn, and completions arriving while a request is in flight form the next request. So a
 * lone completion costs no added latency, and a burst costs one round trip per batch, not per task.
 *
 * Complete and poll (§ Complete and poll): with a {@link Refill}, each batch also asks the server to
 * lease up to as many tasks as the batch frees slots (plus the free ones), in the same request and
 * transaction, and hands them to the worker before the batch's completions resolve.
 */
import { type ErrorCode, OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";
import type { CompleteManyResponseJson, TaskJson, WorkflowOfferJson } from "../domain/worker-protocol.js";
import { LeaseLostError } from "./errors.js";
import type { ProtocolClient } from "./protocol-client.js";

/** Most tasks per request (the server's limit). */
const MAX_BATCH = 1000;
/** How a server without complete and poll refuses its fields (src/api/validation.ts). */
const OLD_SERVER = /^unknown field "(workflows|max_tasks)" in the request body/;

/** What a batch of completes asks the server to lease with it. */
export interface RefillAsk {
  workflows: WorkflowOfferJson[];
  max_tasks: number;
}

/** The worker's side of complete and poll: how many tasks a batch may lease, and where they go. */
export interface Refill {
  /** The lease to ask with a batch of `size` completions, or null (closing). Reserves its slots. */
  ask(size: number): RefillAsk | null;
  /** The tasks leased with that batch (none when it failed): frees the reservation, starts them. */
  leased(ask: RefillAsk, size: number, tasks: TaskJson[]): void;
}

interface Pending {
  taskId: string;
  result: JsonValue;
  retryForMs: number;
  resolve: (cancelReason: string | null) => void;
  reject: (err: unknown) => void;
}

export class Completions {
  private queue: Pending[] = [];
  private sending = false;
  /** False once a server refused the lease fields (older than complete and poll): plain batches from then on. */
  private polling = true;

  constructor(
    private readonly api: ProtocolClient,
    private readonly refill: Refill | null = null,
  ) {}

  /**
   * Resolves with null once the server recorded the completion, or with the cancel reason when a
   * cancel was requested before it (the execution is not completed: the worker compensates);
   * LeaseLostError when the lease was gone.
   */
  complete(taskId: string, result: JsonValue, retryForMs: number): Promise<string | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ taskId, result, retryForMs, resolve, reject });
      if (!this.sending) {
        this.sending = true;
        setImmediate(() => void this.send());
      }
    });
  }

  private async send(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const ask = this.polling ? (this.refill?.ask(batch.length) ?? null) : null;
      let leased: TaskJson[] = [];
      try {
        const answer = await this.request(batch, ask);
        leased = answer.leased ?? [];
        // The new tasks start before the batch's tasks give back their slots.
        if (ask !== null) this.refill?.leased(ask, batch.length, leased);
        for (const p of batch) {
          const a = answer.tasks[p.taskId];
          if (a && "status" in a) p.resolve(a.status === "CANCEL_REQUESTED" ? a.cancel_requested : null);
          else if (a?.code === "CONFLICT") p.reject(new LeaseLostError(a.message));
          else {
            const code = (a?.code ?? "INTERNAL") as ErrorCode;
            p.reject(new OrbitError(code, a?.message ?? `the server did not answer for task ${p.taskId}`));
          }
        }
      } catch (err) {
        if (ask !== null) this.refill?.leased(ask, batch.length, []);
        for (const p of batch) p.reject(err);
      }
    }
    this.sending = false;
  }

  private async request(batch: Pending[], ask: RefillAsk | null): Promise<CompleteManyResponseJson> {
    const items = batch.map((p) => ({ task_id: p.taskId, result: p.result }));
    const retryFor = Math.min(...batch.map((p) => p.retryForMs));
    if (ask === null) return this.api.completeMany(items, retryFor);
    try {
      return await this.api.completeMany(items, retryFor, ask);
    } catch (err) {
      // A server older than complete and poll refuses the unknown fields (400, nothing done):
      // the same batch again without them, and plain batches from then on.
      if (!(err instanceof OrbitError) || !OLD_SERVER.test(err.message)) throw err;
      this.polling = false;
      return this.api.completeMany(items, retryFor);
    }
  }
}
