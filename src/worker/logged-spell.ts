import type { Clock } from "../domain/clock.js";
import { FailureSpell } from "../domain/failure-spell.js";
import { errorJson } from "./errors.js";
import type { WorkflowLogger } from "./workflow.js";

/**
 * A spell of failures of one request (polls, heartbeats) as the log tells it
 * (src/domain/failure-spell.ts): the first, then one line every 30 s while they last (a line each
 * time filled the log through an outage), and one when a request succeeds again.
 */
export class LoggedSpell {
  private readonly spell: FailureSpell;

  constructor(
    clock: Clock,
    private readonly log: WorkflowLogger,
    private readonly lines: { first: string; still: string; again: string; counted: string },
  ) {
    this.spell = new FailureSpell(() => clock.now());
  }

  failed(err: unknown): void {
    const say = this.spell.failed();
    if (say === "first") this.log.warn(this.lines.first, { error: errorJson(err).message });
    else if (say === "still")
      this.log.warn(this.lines.still, { error: errorJson(err).message, failing_for_s: this.spell.failingForS });
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
    if (ended !== null)
      this.log.info(this.lines.again, { failed_for_s: ended.failedForS, [this.lines.counted]: ended.failures });
  }
}
