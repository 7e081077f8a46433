/**
 * Batched completes (docs/workflows.md § Batched completes): the worker's finished tasks go to the
 * server together, one request and one transaction for all of them. Nothing waits to fill a batch:
 * the first completion is sent on the next turn of the event loop with whatever else finished in
 * the same turn, and completions arriving while a request is in flight form the next request. So a
 * lone completion costs no added latency, and a burst costs one round trip per batch, not per task.
 * A batch also stays under the server's request body limit, counting each result's bytes, so that
 * large results (each at most 1 MB) go in requests of their own instead of a 413 for them all.
 */
import { type ErrorCode, OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";
import { MAX_COMPLETES_PER_BATCH } from "../domain/worker-protocol.js";
import { LeaseLostError } from "./errors.js";
import type { ProtocolClient, TaskRef } from "./protocol-client.js";

/**
 * Most bytes of results per request: the server takes bodies up to 2 MB (BODY_LIMIT_BYTES); the
 * rest is room for the task ids and keys (about 90 bytes a task, 90 KB for 1,000).
 */
export const MAX_BATCH_RESULT_BYTES = 1.5 * 1024 * 1024;
/** What a task adds to the body besides its result: `{"task_id":"<uuid>","attempt":n,"result":},`. */
const TASK_OVERHEAD_BYTES = 90;

interface Pending {
  taskId: string;
  attempt: number;
  result: JsonValue;
  /** The result's serialized size. */
  bytes: number;
  retryForMs: number;
  resolve: (cancelReason: string | null) => void;
  reject: (err: unknown) => void;
  /** Sent in a request of its own: the batch it was in was refused as a whole. */
  alone?: true;
}

export class Completions {
  private queue: Pending[] = [];
  private sending = false;

  constructor(private readonly api: ProtocolClient) {}

  /**
   * Resolves with null once the server recorded the completion, or with the cancel reason when a
   * cancel was requested before it (the execution is not completed: the worker compensates);
   * LeaseLostError when the lease was gone.
   */
  complete(task: TaskRef, result: JsonValue, retryForMs: number, bytes: number): Promise<string | null> {
    const { task_id: taskId, attempt } = task;
    return new Promise((resolve, reject) => {
      this.queue.push({ taskId, attempt, result, bytes, retryForMs, resolve, reject });
      if (!this.sending) {
        this.sending = true;
        setImmediate(() => void this.send());
      }
    });
  }

  private async send(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.batchLength());
      try {
        const answer = await this.api.completeMany(
          batch.map((p) => ({ task_id: p.taskId, attempt: p.attempt, result: p.result })),
          Math.min(...batch.map((p) => p.retryForMs)),
        );
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
        // A refusal of the whole request (400) names no task: each goes again alone, so that only
        // one the server refuses fails (its run fails for good, docs/outcomes.md), not the others.
        if (batch.length > 1 && err instanceof OrbitError && err.code === "INVALID_ARGUMENT") {
          this.queue.unshift(...batch.map((p): Pending => ({ ...p, alone: true })));
          continue;
        }
        for (const p of batch) p.reject(err);
      }
    }
    this.sending = false;
  }

  /**
   * How many of the queue's first completions the next request carries (at least one). A task
   * appears once per request: the server answers by task id and refuses a body naming one twice,
   * and a worker can hold two attempts of one task (the server let its first lease end, docs/cluster.md
   * § Limitations, and leased it again here while the first attempt's completion waited to be sent).
   */
  private batchLength(): number {
    let n = 0;
    let bytes = 0;
    const tasks = new Set<string>();
    for (const p of this.queue) {
      bytes += p.bytes + TASK_OVERHEAD_BYTES;
      if (n === MAX_COMPLETES_PER_BATCH || (n > 0 && bytes > MAX_BATCH_RESULT_BYTES)) break;
      if (n > 0 && (p.alone || tasks.has(p.taskId))) break;
      tasks.add(p.taskId);
      n++;
      if (p.alone) break;
    }
    return n;
  }
}
