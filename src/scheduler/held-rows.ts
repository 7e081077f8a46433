/**
 * Due schedules whose rows another database session holds. The firing loop reads due rows `FOR
 * UPDATE SKIP LOCKED` (PostgreSQL), so a row locked elsewhere is passed over without a word: a
 * frozen server's open transaction held one for up to 30 s while the schedule did not fire. The
 * loop tells this from its rounds at no extra cost while all goes well: only a round that leaves
 * something due reads the due rows once more, without locks, and the ones its fires never saw are
 * held. One held longer than `warnAfterMs` is logged, at most once per schedule per `everyMs`.
 */
/** A due row held this long by another session is logged. */
export const HELD_ROW_WARN_MS = 5000;
/** A schedule's held row is logged at most this often. */
export const HELD_ROW_WARN_EVERY_MS = 60_000;

export class HeldRows {
  /** Schedule id → when its row was first seen held (performance.now()). */
  private readonly since = new Map<string, number>();
  /** Schedule id → when its held row was last logged. */
  private readonly warned = new Map<string, number>();

  constructor(
    /** Says that `scheduleId`'s row has been held `heldMs`. */
    private readonly onHeld: (scheduleId: string, heldMs: number) => void,
    private readonly warnAfterMs = HELD_ROW_WARN_MS,
    private readonly everyMs = HELD_ROW_WARN_EVERY_MS,
  ) {}

  /**
   * After a round: the due schedules its fires did not see, at `now` (performance.now()). Answers how
   * many of them the round before did not see either: held elsewhere (one unseen once may only have
   * come due after the round's fire read the clock, and fires in the next round).
   */
  note(held: readonly string[], now: number): number {
    const still = new Set(held);
    for (const id of this.since.keys()) if (!still.has(id)) this.since.delete(id);
    let again = 0;
    for (const id of still) {
      const seen = this.since.get(id);
      if (seen !== undefined) again++;
      const since = seen ?? now;
      this.since.set(id, since);
      const last = this.warned.get(id);
      if (now - since < this.warnAfterMs || (last !== undefined && now - last < this.everyMs)) continue;
      this.warned.set(id, now);
      this.onHeld(id, Math.round(now - since));
    }
    for (const [id, at] of this.warned) if (now - at >= this.everyMs) this.warned.delete(id);
    return again;
  }

  /** A round left nothing due. */
  clear(): void {
    this.since.clear();
  }
}
