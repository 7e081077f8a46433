import type { Clock } from "../domain/clock.js";
import { FAILING_SAID_EVERY_MS, FailureSpell } from "../domain/failure-spell.js";
import { errorJson } from "./errors.js";
import type { WorkflowLogger } from "./workflow.js";

/**
 * A spell of failures of one request (polls, heartbeats) as the log tells it
 * (src/domain/failure-spell.ts): the first, then one line every 30 s while they last (a line each
 * time filled the log through an outage), and one when a request succeeds again.
 *
 * A link that flaps (connections dropped every few seconds, each spell one failure long) wrote a
 * `failed` and an `again` line per drop, about 40 a minute (a tester's proxy). A spell that opens
 * less than 30 s after the last one said is quiet: no line unless it lasts until its `still` line,
 * and the next line said counts the quiet ones (`quiet_spells`).
 */
export class LoggedSpell {
  private readonly spell: FailureSpell;
  /** When a spell was last said (its first line); null: never. */
  private saidAt: number | null = null;
  /** The spell on now was not said (see the class comment). */
  private quiet = false;
  /** Quiet spells since the last line said. */
  private quietSpells = 0;

  constructor(
    private readonly clock: Clock,
    private readonly log: WorkflowLogger,
    private readonly lines: { first: string; still: string; again: string; counted: string },
  ) {
    this.spell = new FailureSpell(() => clock.now());
  }

  failed(err: unknown): void {
    const say = this.spell.failed();
    if (say === "first") {
      const now = this.clock.now();
      this.quiet = this.saidAt !== null && now - this.saidAt < FAILING_SAID_EVERY_MS;
      if (this.quiet) {
        this.quietSpells++;
        return;
      }
      this.saidAt = now;
      this.log.warn(this.lines.first, { error: errorJson(err).message, ...this.quietCount() });
    } else if (say === "still") {
      // A quiet spell that lasts is said from here on, as any other (and is not counted as quiet).
      if (this.quiet) this.quietSpells--;
      this.quiet = false;
      this.log.warn(this.lines.still, {
        error: errorJson(err).message,
        failing_for_s: this.spell.failingForS,
        ...this.quietCount(),
      });
    }
  }

  /** Whether a spell is on: something failed and nothing has succeeded since. */
  get failing(): boolean {
    return this.spell.failing;
  }

  /** Ends a spell without a line (nothing left to send). */
  forget(): void {
    this.spell.forget();
  }

  succeeded(): void {
    const ended = this.spell.succeeded();
    if (ended === null || this.quiet) return;
    this.log.info(this.lines.again, { failed_for_s: ended.failedForS, [this.lines.counted]: ended.failures });
  }

  /** `{quiet_spells: n}` when spells went unsaid since the last line, and starts counting again. */
  private quietCount(): { quiet_spells?: number } {
    const n = this.quietSpells;
    this.quietSpells = 0;
    return n > 0 ? { quiet_spells: n } : {};
  }
}
