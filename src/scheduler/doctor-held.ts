/**
 * The warning of `orbit doctor`'s `schedules` check about schedules their concurrency key holds
 * off (docs/operations.md § Doctor, docs/scheduling.md § Decisions): occurrences come due
 * and are skipped or buffered because another schedule's execution holds the key, so nothing
 * starts, while the schedule is not overdue (the loop decides it on time) and its runs fail
 * nothing. A schedule whose buffer waited behind an `allow` schedule on its key fired 0 and skipped
 * 1,008 with orbit_schedules_overdue at 0 and doctor saying ok (a tester).
 */
import type { ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { named, type OutcomeWarning } from "./doctor-outcomes.js";
import { bufferedOf } from "./fire-plan.js";
import { isOverdue } from "./schedule-search.js";

/** The most schedules whose ledger head and last execution one doctor run reads (one query each). */
export const HELD_OFF_CHECKED = 100;

/** The ledger rows that say an occurrence waited for the key: skipped for it, or buffered. */
const waitedForKey = (kind: string, reason: string | null): boolean =>
  kind === "buffered" || (kind === "skipped" && (reason === "concurrency" || reason === "buffer_full"));

/**
 * The active, unpaused schedules with a concurrency key, not overdue, held off by the key for
 * longer than `graceMs` before `dueAt`: either nothing started for longer than that and the newest
 * ledger row is an occurrence skipped for the key or buffered, or the oldest buffered occurrence is
 * older than that. Their own last execution must have ended more than `graceMs` ago (or they have
 * none): while it runs, or just after (a buffer woken by its end, decided at the loop's next round),
 * what holds them is their own run, not the key. Null when none.
 */
export async function heldOffByKey(
  tx: StoreOps,
  rows: readonly ScheduleRow[],
  dueAt: number,
  graceMs: number,
): Promise<OutcomeWarning | null> {
  const before = dueAt - graceMs;
  const idleSince = (r: ScheduleRow): number => r.lastFireMs ?? r.createdMs;
  const oldest = (r: ScheduleRow): number | undefined => bufferedOf(r)[0];
  const heldSince = (r: ScheduleRow): number => Math.min(idleSince(r), oldest(r) ?? Number.POSITIVE_INFINITY);
  const candidates = rows
    .filter(
      (r) =>
        r.state === "active" &&
        !r.paused &&
        r.concurrencyKey !== null &&
        heldSince(r) < before &&
        !isOverdue(r, dueAt, graceMs),
    )
    .sort((a, b) => heldSince(a) - heldSince(b) || a.scheduleId.localeCompare(b.scheduleId))
    .slice(0, HELD_OFF_CHECKED);
  if (candidates.length === 0) return null;
  const heads = await tx.ledgerHeads(
    candidates.map((r) => r.scheduleId),
    0,
  );
  const held: string[] = [];
  for (const r of candidates) {
    if (r.lastExecutionId !== null) {
      const own = await tx.getExecution(r.lastExecutionId);
      if (own !== null && (own.endedMs === null || own.endedMs >= before)) continue;
    }
    const tick = heads.get(r.scheduleId)?.lastTick ?? null;
    const idle = idleSince(r) < before && tick !== null && waitedForKey(tick.kind, tick.reason);
    const first = oldest(r);
    const buffered = first !== undefined && first < before;
    if (!idle && !buffered) continue;
    const said: string[] = [];
    if (idle) said.push(`nothing started for ${Math.round((dueAt - idleSince(r)) / 1000)} s`);
    if (idle && r.skipped > 0) said.push(`${r.skipped} skipped`);
    if (first !== undefined)
      said.push(`${r.buffered.length} buffered, the oldest due ${Math.round((dueAt - first) / 1000)} s ago`);
    held.push(`${r.scheduleId} (key ${r.concurrencyKey}; ${said.join(", ")})`);
  }
  if (held.length === 0) return null;
  return {
    message: `${held.length} schedule(s) held off by their concurrency key: ${named(held)}`,
    hint: "another schedule on the same key keeps it: one with overlap allow, or a buffer that never empties, starts again before the key is free; give them different keys, or space out the other's runs; `orbit schedule occurrences <id>` shows the skips (docs/scheduling.md § Decisions, concurrency keys)",
  };
}
