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
 *
 * A spell of the server's passes ends only once what failed has worked for {@link SPELL_SETTLE_MS}
 * without failing again: connections killed every second or two (a tester's pg_terminate_backend
 * loop) wrote `firing failed` and `firing works again` in turn, about 25 times in 30 s, and the LISTEN
 * and leadership connections 13 to 15 times a minute each. A failure within that time goes on with
 * the spell (its 30 s line, counted in `worked_briefly`).
 */

import { thrownText } from "./error-text.js";

/** While a failure repeats, how often the log says it still does. */
export const FAILING_SAID_EVERY_MS = 30_000;

/** How long what failed must work without failing again before the server's log says it works again. */
export const SPELL_SETTLE_MS = 10_000;

/** A spell that ended: how long it failed (until it worked for good), and how often. */
export interface EndedSpell {
  failedForS: number;
  failures: number;
  /** Times it worked less than the settle time, then failed again. */
  workedBriefly: number;
}

export class FailureSpell {
  private since: number | null = null;
  private said = 0;
  private last = 0;
  private count = 0;
  /** Since when it has worked, its spell not ended yet (the settle time); null: failing or no spell. */
  private okSince: number | null = null;
  private brief = 0;

  /**
   * `settleMs`: how long it must work before a success ends the spell (0, the worker's: the first
   * success ends it).
   */
  constructor(
    private readonly now: () => number,
    private readonly everyMs = FAILING_SAID_EVERY_MS,
    private readonly settleMs = 0,
  ) {}

  /**
   * Counts a failure: `first` opens a spell, `still` is the line due every 30 s, null says nothing.
   * `attemptStartedMs`: when the failed attempt began. A spell opened by an attempt that waited
   * (a database that stopped answering fails only at the 30 s answer timeout) counts from then.
   */
  failed(attemptStartedMs?: number): "first" | "still" | null {
    const now = this.now();
    // Worked a while, and less than the settle time: the same spell goes on, whatever the quiet.
    const relapse = this.since !== null && this.okSince !== null && now - this.okSince < this.settleMs;
    if (relapse) this.brief++;
    else if (this.okSince !== null) this.forget(); // settled unsaid: callers ask settled() first
    this.okSince = null;
    if (this.since !== null && !relapse && now - this.last > this.everyMs) this.since = null;
    this.last = now;
    if (this.since === null) {
      this.since = Math.min(now, attemptStartedMs ?? now);
      this.said = now;
      this.count = 1;
      this.brief = 0;
      return "first";
    }
    this.count++;
    if (now - this.said < this.everyMs) return null;
    this.said = now;
    return "still";
  }

  /** Whether a spell is on: something failed and nothing has succeeded since. */
  get failing(): boolean {
    return this.since !== null && this.okSince === null;
  }

  /** Failures of the spell on, and how often it worked briefly between them. */
  get failures(): { failures: number; workedBriefly: number } {
    return { failures: this.count, workedBriefly: this.brief };
  }

  /** Seconds since the spell's first failure (0 without one). */
  get failingForS(): number {
    return this.since === null ? 0 : Math.round((this.now() - this.since) / 1000);
  }

  /**
   * A success: ends the spell once it has worked for the settle time (its figures), else null.
   * `workedForMs`: how long it had already worked (a connection that stayed up that long).
   */
  succeeded(workedForMs = 0): EndedSpell | null {
    if (this.since === null) return null;
    const now = this.now();
    this.okSince = Math.max(this.last, Math.min(this.okSince ?? now, now - workedForMs));
    return this.settled();
  }

  /** Ends a spell whose success has lasted the settle time: its figures; null while not (or none on). */
  settled(): EndedSpell | null {
    if (this.since === null || this.okSince === null || this.now() - this.okSince < this.settleMs) return null;
    const ended = {
      failedForS: Math.round((this.okSince - this.since) / 1000),
      failures: this.count,
      workedBriefly: this.brief,
    };
    this.forget();
    return ended;
  }

  /** Ends a spell without a line (nothing left to send). */
  forget(): void {
    this.since = null;
    this.okSince = null;
    this.count = 0;
    this.brief = 0;
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
 * `failures` once it has worked for {@link SPELL_SETTLE_MS} (said at its next success or failure
 * after that). A spell in which it worked briefly says how often on those lines (`worked_briefly`,
 * with `failures` on the 30 s line).
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
    this.spell = new FailureSpell(now, FAILING_SAID_EVERY_MS, SPELL_SETTLE_MS);
  }

  /** `attemptStartedMs`: when the failed attempt began ({@link FailureSpell.failed}). */
  failed(err: unknown, attemptStartedMs?: number): void {
    // A spell that had settled ends first: its "works again" comes before this failure's line.
    this.ended(this.spell.settled());
    const say = this.spell.failed(attemptStartedMs);
    if (say === null) return;
    const write = this.log?.[this.level]?.bind(this.log);
    if (say === "still") {
      const { failures, workedBriefly } = this.spell.failures;
      const flapping = workedBriefly > 0 ? { failures, worked_briefly: workedBriefly } : {};
      write?.({ error: thrownText(err), failing_for_s: this.spell.failingForS, ...flapping }, this.lines.still);
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

  /** `workedForMs`: how long it has already worked without failing (a connection up that long). */
  succeeded(workedForMs = 0): void {
    this.ended(this.spell.succeeded(workedForMs));
  }

  private ended(ended: EndedSpell | null): void {
    if (ended === null || this.lines.again === undefined) return;
    const { failedForS, failures, workedBriefly } = ended;
    const brief = workedBriefly > 0 ? { worked_briefly: workedBriefly } : {};
    this.log?.info?.({ failed_for_s: failedForS, failures, ...brief }, this.lines.again);
  }
}

/** The lines of a background pass that retries: `<what> failed; <retry>`, `… still fails; …`, `… works again`. */
export function passLines(what: string, retry: string): SpellLines {
  return { failed: `${what} failed; ${retry}`, still: `${what} still fails; ${retry}`, again: `${what} works again` };
}

/**
 * A line that can come in bursts, said the first time and then at most once every 30 s, telling
 * how many were held back meanwhile. The reaper's grace said `leases extended by a full lease` at
 * every 503 while connections were being killed: 17 lines in a second, 243 in a minute (a tester).
 */
export class HeldBackLine {
  private saidAt: number | null = null;
  private held = 0;

  constructor(
    private readonly now: () => number,
    private readonly everyMs = FAILING_SAID_EVERY_MS,
  ) {}

  /** One more: `heldBack` (those held back since the last line) when it is to be said now, else null. */
  occurred(): { heldBack: number } | null {
    const now = this.now();
    if (this.saidAt !== null && now - this.saidAt < this.everyMs) {
      this.held++;
      return null;
    }
    return this.said(now);
  }

  /**
   * Those held back, when their summary is due (30 s since the last line said): `heldBack` and
   * `forS` (the seconds since that line); null when none is due. Asked by a pass that runs anyway.
   */
  due(): { heldBack: number; forS: number } | null {
    const now = this.now();
    if (this.held === 0 || this.saidAt === null || now - this.saidAt < this.everyMs) return null;
    const forS = Math.round((now - this.saidAt) / 1000);
    return { ...this.said(now), forS };
  }

  private said(now: number): { heldBack: number } {
    const heldBack = this.held;
    this.saidAt = now;
    this.held = 0;
    return { heldBack };
  }
}
