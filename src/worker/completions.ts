/**
 * Batched completes (docs/workflows.md § Batched completes): the worker's finished tasks go to the
 * server together, one request and one transaction for all of them. Nothing waits to fill a batch:
 * the first completion is sent on the next turn of the event loop with whatever else finished in
 * the same turn, and completions arriving while a request is in flight form the next request. So a
 * lone completion costs no added latency, and a burst costs one round trip per batch, not per task.
 */
import { type ErrorCode, OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";
import { LeaseLostError } from "./errors.js";
import type { ProtocolClient } from "./protocol-client.js";

/** Most tasks per request (the server's limit). */
const MAX_BATCH = 1000;

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

  constructor(private readonly api: ProtocolClient) {}

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
      try {
        const answer = await this.api.completeMany(
          batch.map((p) => ({ task_id: p.taskId, result: p.result })),
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
        for (const p of batch) p.reject(err);
      }
    }
    this.sending = false;
  }
}
