/** Errors and signals of the worker SDK. */

/** Throw from a workflow or a step to fail the execution at once, whatever the retry policy. */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
}

/** What `ctx.step` throws once the execution was cancelled (the reason is the message). */
export class CancelledError extends Error {
  override readonly name = "CancelledError";
  constructor(readonly reason: string) {
    super(`the execution was cancelled: ${reason}`);
  }
}

/** The worker no longer holds the task (its lease expired and another worker may run it). */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

/** Thrown by `ctx.continueAsNew`; the worker turns it into a continue-as-new report. */
export class ContinueAsNewSignal extends Error {
  override readonly name = "ContinueAsNewSignal";
  constructor(readonly input: unknown) {
    super("continue as new");
  }
}

/** Thrown by `ctx.step` while the worker is closing: the task is handed back between two steps. */
export class HandBackSignal extends Error {
  override readonly name = "HandBackSignal";
  constructor() {
    super("the worker is closing; the task is handed back");
  }
}

/** An error as the protocol carries it: `{message, type, step?}`. */
export function errorJson(err: unknown, step?: string | null): { message: string; type: string; step?: string } {
  const message = err instanceof Error ? err.message : String(err);
  const type = err instanceof Error ? err.name : typeof err;
  return step ? { message, type, step } : { message, type };
}
