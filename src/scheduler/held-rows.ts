/**
 * Due schedules whose rows another database session holds. The firing loop reads due rows `FOR
 * UPDATE SKIP LOCKED` (PostgreSQL), so a row locked elsewhere is passed over without a word: a
 * frozen server's open transaction held one for up to 30 s while the schedule did not fire. The
 * loop tells this from its rounds at no extra cost while all goes well: only a round that leaves
 * something due reads the due rows once more, without locks, and the ones its fires never saw are
 * held. One held longer than `warnAfterMs` is logged, at most once per schedule per `everyMs`.
 */
import type { ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { type SchedulerLogger, scheduleLog } from "./scheduler-log.js";

/** A due row held this long by another session is logged. */
export const HELD_ROW_WARN_MS = 5000;
/**
 * How long the loop waits in the queue for a held row's lock (PostgreSQL) before it passes the row
 * over until its next round: longer than a write's transaction, short against the misfire grace.
 */
export const HELD_LOCK_WAIT_MS = 1000;
/** Held rows waited for at once, each on its own connection. */
export const HELD_FIRES_AT_ONCE = 4;
/** A schedule's held row is logged at most this often. */
export const HELD_ROW_WARN_EVERY_MS = 60_000;
/**
 * Rounds further apart than this say nothing of what happened between them (the database's answer
 * bound: a round that long did not get its answers): what was held before counts afresh. A server
 * cut off from PostgreSQL for 130 s said, once back, that other sessions had held 60 rows for 130 s,
 * while the other server had fired them all along (a tester).
 */
export const HELD_ROW_GAP_MS = 30_000;

export class HeldRows {
  /** Schedule id → when its row was first seen held (performance.now()). */
  private readonly since = new Map<string, number>();
  /** Schedule id → when its held row was last logged. */
  private readonly warned = new Map<string, number>();
  /** When the last round was noted (performance.now()); null: none since a clear. */
  private lastNote: number | null = null;

  constructor(
    /**
     * Says that the rows of `scheduleIds` have been held up to `heldMs`: once per round for all of
     * them (a shared cluster on a slow database wrote 50 lines in 30 s, one per schedule; a tester).
     */
    private readonly onHeld: (scheduleIds: string[], heldMs: number) => void,
    private readonly warnAfterMs = HELD_ROW_WARN_MS,
    private readonly everyMs = HELD_ROW_WARN_EVERY_MS,
  ) {}

  /**
   * After a round: the due schedules its fires did not see, at `now` (performance.now()). Answers how
   * many of them the round before did not see either: held elsewhere (one unseen once may only have
   * come due after the round's fire read the clock, and fires in the next round).
   */
  note(held: readonly string[], now: number): number {
    if (this.lastNote !== null && now - this.lastNote > HELD_ROW_GAP_MS) this.since.clear();
    this.lastNote = now;
    const still = new Set(held);
    for (const id of this.since.keys()) if (!still.has(id)) this.since.delete(id);
    let again = 0;
    const told: string[] = [];
    let longest = 0;
    for (const id of still) {
      const seen = this.since.get(id);
      if (seen !== undefined) again++;
      const since = seen ?? now;
      this.since.set(id, since);
      const last = this.warned.get(id);
      if (now - since < this.warnAfterMs || (last !== undefined && now - last < this.everyMs)) continue;
      this.warned.set(id, now);
      told.push(id);
      longest = Math.max(longest, now - since);
    }
    if (told.length > 0) this.onHeld(told, Math.round(longest));
    for (const [id, at] of this.warned) if (now - at >= this.everyMs) this.warned.delete(id);
    return again;
  }

  /** A round left nothing due, or failed. */
  clear(): void {
    this.since.clear();
    this.lastNote = null;
  }
}

/**
 * What the loop says of held rows, through `log` (one schedule's through its child, with its id),
 * naming first the cause to look for in a shared cluster, then the others.
 */
export function heldRowsWarning(log: SchedulerLogger | undefined): (ids: string[], heldMs: number) => void {
  const why = `until that session ends: pg_stat_activity and pg_locks show which (another server's fire batch on a slow database, a long write such as a large backfill, or a frozen server's transaction, which is ended after 10 s)`;
  return (ids, heldMs) => {
    const [id] = ids;
    if (ids.length === 1 && id !== undefined) {
      scheduleLog(log, id)?.warn(
        { held_ms: heldMs },
        `schedule ${id} is due but another database session holds its row, so the firing passes over it (FOR UPDATE SKIP LOCKED) ${why}`,
      );
    } else {
      log?.warn(
        { held_ms: heldMs, schedules: ids.length, schedule_ids: ids.slice(0, 10) },
        `${ids.length} due schedules' rows are held by other database sessions, so the firing passes over them (FOR UPDATE SKIP LOCKED) ${why}`,
      );
    }
  };
}

/**
 * The schedule's row, locked, when it is still due at `now`; else null. With `waitMs` (PostgreSQL)
 * the lock is waited for that long at most (UNAVAILABLE `lockTimeout` after).
 */
export async function lockedDue(
  tx: StoreOps,
  scheduleId: string,
  now: number,
  waitMs?: number,
): Promise<ScheduleRow | null> {
  const row = await tx.getSchedule(
    scheduleId,
    waitMs === undefined ? { forUpdate: true } : { forUpdate: true, waitMs },
  );
  if (row === null || row.state !== "active" || row.paused || row.dueMs === null || row.dueMs > now) return null;
  return row;
}

/** How long the loop pauses, in wall time, when all it finds due is held by another session. */
const HELD_PAUSE_MS = 100;

export function heldPause(wake: AbortSignal, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      wake.removeEventListener("abort", done);
      stop.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, HELD_PAUSE_MS);
    wake.addEventListener("abort", done, { once: true });
    stop.addEventListener("abort", done, { once: true });
  });
}
