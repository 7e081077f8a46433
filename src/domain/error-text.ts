/**
 * What to say of any thrown value, in a worker's report and log lines and in the server's (a
 * webhook that failed): never throws, whatever was thrown (docs/outcomes.md § Failures are always
 * reportable).
 */

import { storableChars } from "./body-guard.js";

/** Longest error message reported, in UTF-16 units; the rest is cut, saying how much. */
const MAX_ERROR_MESSAGE = 32 * 1024;

/** What a log line or a report says of any thrown value; never throws (errorJson's message). */
export function thrownText(err: unknown): string {
  let message: unknown;
  try {
    message = thrownMessage(err);
  } catch {
    // A part of it no guard below foresaw (an AggregateError whose `errors` is a revoked Proxy
    // threw from Array.isArray, and its report failed until the lease ran out): said by its kind.
    message = unreadable(err);
  }
  return storableText(message, MAX_ERROR_MESSAGE);
}

/** What is said of a value that cannot be read. */
function unreadable(value: unknown): string {
  return `[${typeof value} that cannot be read: a revoked Proxy, or one whose traps throw]`;
}

/**
 * `value instanceof type`, false when asking throws: a thrown revoked Proxy (an immer draft after
 * its `produce`), or a Proxy whose traps throw, threw again from every `instanceof`, so its report
 * failed and the run re-ran until its 20 leases were spent (a tester).
 */
export function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** `read()`, or what the value is when reading it throws (a hostile getter). */
export function safely(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return "[unreadable]";
  }
}

/** How many causes deep a message follows (`fetch failed: connect ECONNREFUSED …`). */
const CAUSES_SHOWN = 3;

/**
 * What to say of a thrown value: an Error's message followed by its causes' (the reason of a failed
 * `fetch` is only in its cause), an AggregateError without a message by its errors'; a thrown
 * object's own `message` string, or else its JSON (`{"code":42}`, where String() says
 * `[object Object]`); anything else as it is.
 */
function thrownMessage(err: unknown): unknown {
  if (isInstance(err, Error)) {
    const parts: string[] = [];
    let e: unknown = err;
    for (let depth = 0; depth <= CAUSES_SHOWN && isInstance(e, Error); depth++) {
      const own = errorText(e);
      // A message that already says its cause's (`step two failed: ${e.message}`, { cause: e })
      // is not followed by it again: it read `step two failed: x: x`.
      const last = parts[parts.length - 1];
      if (own !== "" && own !== last && !last?.endsWith(`: ${own}`)) parts.push(own);
      e = safely(() => (e as Error).cause);
    }
    // A cause that is not an Error (a string, a code) is said as it is.
    if (e !== undefined && e !== null && !isInstance(e, Error) && parts.length <= CAUSES_SHOWN)
      parts.push(safeString(thrownMessage(e)));
    return parts.join(": ");
  }
  if (typeof err !== "object" || err === null) return err;
  try {
    const own = (err as { message?: unknown }).message;
    if (typeof own === "string") return own;
    // Its own toString says more; an object without one (`Object.create(null)`) is said as JSON too.
    const text = safely(() => String(err));
    if (text !== "[object Object]" && text !== "[unreadable]") return err;
    const json = JSON.stringify(err);
    return json === undefined ? err : json;
  } catch {
    return err; // a getter or toJSON that throws: described by its kind below
  }
}

/** An Error's own message; an AggregateError without one, its errors' messages. */
function errorText(e: Error): string {
  const message = safely(() => e.message);
  const own = typeof message === "string" ? message : safeString(message);
  if (own !== "") return own;
  // A copy made where reading it throws (a revoked Proxy for an array): nothing to say then.
  const errors = safely(() => {
    const list = (e as { errors?: unknown }).errors;
    return Array.isArray(list) ? [...list] : null;
  });
  if (!Array.isArray(errors)) return own;
  return errors
    .map((x) => (isInstance(x, Error) ? errorText(x) : thrownText(x)))
    .filter((t) => t !== "")
    .join("; ");
}

/**
 * String(value), or what it is (`[object Object]`) when that throws (no prototype, a hostile
 * toString), or its kind when even that throws (a revoked Proxy).
 */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return unreadable(value);
    }
  }
}

export function storableText(value: unknown, max: number): string {
  let text = safeString(value);
  if (text.length > max) text = `${text.slice(0, max)}… (${text.length - max} more characters)`;
  return storableChars(text);
}
