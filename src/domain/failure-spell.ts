/**
 * A failure that repeats while an outage lasts, as a log tells it: the first with its error, then
 * one line every 30 s with how long it has lasted, and one when it works again. The server's
 * background passes (firing, the reaper, timeouts, webhooks, LISTEN) each logged every failure with
 * its stack, about five lines a second through a database outage (537 KB in 95 s); the worker's
 * polls and heartbeats a line a second. A failure after 30 s without one starts a new spell, so a
 * failure that nothing ends (an idle connection dropped) is said again when it comes back. A spell
 * that opens within 30 s of one said with its stack is said in one line with its error's text: a
 * connection terminated again and again (pg_terminate_backend in a loop) wrote the same pg-protocol
 * stack for each short spell, 30 in a minute (docs/operations.md § When PostgreSQL restarts).
 */

import { thrownText } from "./error-text.js";

/** While a failure repeats, how often the log says it still does. */
export const FAILING_SAID_EVERY_MS = 30_000;

export class FailureSpell {
  private since: number | null = null;
  private said = 0;
  private last = 0;
  private count = 0;

  constructor(
    private readonly now: () => number,
    private readonly everyMs = FAILING_SAID_EVERY_MS,
  ) {}

  /**
   * Counts a failure: `first` opens a spell, `still` is the line due every 30 s, null says nothing.
   * `attemptStartedMs`: when the failed attempt began. A spell opened by an attempt that waited
   * (a database that stopped answering fails only at the 30 s answer timeout) counts from then.
   */
  failed(attemptStartedMs?: number): "first" | "still" | null {
    const now = this.now();
    if (this.since !== null && now - this.last > this.everyMs) this.since = null;
    this.last = now;
    if (this.since === null) {
      this.since = Math.min(now, attemptStartedMs ?? now);
      this.said = now;
      this.count = 1;
      return "first";
    }
    this.count++;
    if (now - this.said < this.everyMs) return null;
    this.said = now;
    return "still";
  }

  /** Whether a spell is on: something failed and nothing has succeeded since. */
  get failing(): boolean {
    return this.since !== null;
  }

  /** Seconds since the spell's first failure (0 without one). */
  get failingForS(): number {
    return this.since === null ? 0 : Math.round((this.now() - this.since) / 1000);
  }

  /** Ends a spell: its length and failures, or null when none was on. */
  succeeded(): { failedForS: number; failures: number } | null {
    if (this.since === null) return null;
    const ended = { failedForS: this.failingForS, failures: this.count };
    this.forget();
    return ended;
  }

  /** Ends a spell without a line (nothing left to send). */
  forget(): void {
    this.since = null;
    this.count = 0;
  }
}

/** The server's logger (pino's shape: the fields first). */
export interface FieldsLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** The lines of a spell: the first failure's, the one every 30 s, the one when it works again. */
export interface SpellLines {
  failed: string;
  still: string;
  /** Said at info when a success ends the spell; without it the spell ends unsaid. */
  again?: string;
}

/**
 * A {@link FailureSpell} told in the server's log: `failed` with the error (its stack) once,
 * `still` with the error's text and `failing_for_s` every 30 s, `again` with `failed_for_s` and
 * `failures` when it works again.
 */
export class LoggedFailures {
  private readonly spell: FailureSpell;
  /** When a spell was last said with its stack; a spell opening less than 30 s later is one line. */
  private stackSaidAt: number | null = null;

  constructor(
    private readonly log: Partial<FieldsLog> | undefined,
    private readonly now: () => number,
    private readonly lines: SpellLines,
    private readonly level: "error" | "warn" = "error",
  ) {
    this.spell = new FailureSpell(now);
  }

  /** `attemptStartedMs`: when the failed attempt began ({@link FailureSpell.failed}). */
  failed(err: unknown, attemptStartedMs?: number): void {
    const say = this.spell.failed(attemptStartedMs);
    if (say === null) return;
    const write = this.log?.[this.level]?.bind(this.log);
    if (say === "still") {
      write?.({ error: thrownText(err), failing_for_s: this.spell.failingForS }, this.lines.still);
      return;
    }
    const now = this.now();
    if (this.stackSaidAt !== null && now - this.stackSaidAt < FAILING_SAID_EVERY_MS) {
      write?.({ error: thrownText(err) }, this.lines.failed);
      return;
    }
    this.stackSaidAt = now;
    write?.({ err }, this.lines.failed);
  }

  /**
   * Ends a spell without a line: what failed no longer has to work (a server that stopped leading
   * does not fire), so no "works again" is owed, and a later one does not count this time.
   */
  forget(): void {
    this.spell.forget();
  }

  succeeded(): void {
    const ended = this.spell.succeeded();
    if (ended !== null && this.lines.again !== undefined)
      this.log?.info?.({ failed_for_s: ended.failedForS, failures: ended.failures }, this.lines.again);
  }
}

/** The lines of a background pass that retries: `<what> failed; <retry>`, `… still fails; …`, `… works again`. */
export function passLines(what: string, retry: string): SpellLines {
  return { failed: `${what} failed; ${retry}`, still: `${what} still fails; ${retry}`, again: `${what} works again` };
}
