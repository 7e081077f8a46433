/** Errors and signals of the worker SDK. */

import { isInstance, safely, storableText, thrownText } from "../domain/error-text.js";
import { MAX_STEP_NAME } from "../domain/worker-protocol.js";

export { thrownText };

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
  constructor(
    message: string,
    /**
     * Refused when sent again after the first try's answer was lost: the first most likely landed
     * and ended the lease itself (else the lease ended meanwhile).
     */
    readonly afterLostAnswer = false,
    /**
     * Refused when sent again after a try answered 503: the server's database may have committed
     * the first with its answer lost (then the execution went on), or the lease ended meanwhile.
     */
    readonly after503 = false,
  ) {
    super(message);
  }
}

/**
 * What `ctx.step` and `ctx.continueAsNew` throw once the run has returned or thrown: they belong to
 * the run, which is over (its execution may have ended), so the step's function does not run.
 */
export class RunEndedError extends Error {
  override readonly name = "RunEndedError";
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

const MAX_ERROR_TYPE = 200;

/**
 * An error as the protocol carries it: `{message, type, step?}`. Whatever was thrown can be
 * reported (docs/outcomes.md § Results that cannot be stored): a message is cut at 32 K
 * characters, NUL and lone surrogates (which the server refuses) become U+FFFD, and a value whose
 * conversion to text throws is described by its kind, so that the report itself never fails and
 * leaves the lease to run out into the same failure again.
 */
export function errorJson(err: unknown, step?: string | null): { message: string; type: string; step?: string } {
  const message = thrownText(err);
  const type = isInstance(err, Error)
    ? storableText(
        safely(() => err.name),
        MAX_ERROR_TYPE,
      )
    : typeof err;
  // A step's whole name, as journaled (cut at the type's 200, it no longer matched the journal).
  return step ? { message, type, step: storableText(step, MAX_STEP_NAME) } : { message, type };
}
