/** Errors and signals of the worker SDK. */

import { storableChars } from "../domain/body-guard.js";

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

/** Longest error message reported, in UTF-16 units; the rest is cut, saying how much. */
export const MAX_ERROR_MESSAGE = 32 * 1024;
const MAX_ERROR_TYPE = 200;

/**
 * An error as the protocol carries it: `{message, type, step?}`. Whatever was thrown can be
 * reported (docs/outcomes.md § Results that cannot be stored): a message is cut at 32 K
 * characters, NUL and lone surrogates (which the server refuses) become U+FFFD, and a value whose
 * conversion to text throws is described by its kind, so that the report itself never fails and
 * leaves the lease to run out into the same failure again.
 */
export function errorJson(err: unknown, step?: string | null): { message: string; type: string; step?: string } {
  const message = storableText(thrownMessage(err), MAX_ERROR_MESSAGE);
  const type = err instanceof Error ? storableText(err.name, MAX_ERROR_TYPE) : typeof err;
  return step ? { message, type, step: storableText(step, MAX_ERROR_TYPE) } : { message, type };
}

/**
 * What to say of a thrown value: an Error's message; a thrown object's own `message` string, or else
 * its JSON (`{"code":42}`, where String() says `[object Object]`); anything else as it is.
 */
function thrownMessage(err: unknown): unknown {
  if (err instanceof Error) return err.message;
  if (typeof err !== "object" || err === null) return err;
  try {
    const own = (err as { message?: unknown }).message;
    if (typeof own === "string") return own;
    if (String(err) !== "[object Object]") return err; // its own toString says more
    const json = JSON.stringify(err);
    return json === undefined ? err : json;
  } catch {
    return err; // a getter or toJSON that throws: described by its kind below
  }
}

function storableText(value: unknown, max: number): string {
  let text: string;
  try {
    text = String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  if (text.length > max) text = `${text.slice(0, max)}… (${text.length - max} more characters)`;
  return storableChars(text);
}
