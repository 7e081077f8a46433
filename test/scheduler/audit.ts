/**
 * The ledger, occurrence by occurrence: what each nominal occurrence of a schedule became. Tests
 * use it to check that every occurrence is accounted for exactly once (docs/scheduling.md,
 * "Every occurrence accounted for").
 */
import { compiledFor } from "../../src/scheduler/compiled.js";
import type { OccurrenceRow } from "../../src/store/rows.js";
import type { Store } from "../../src/store/store.js";

/** started | buffered | dead_letter | skipped:<reason> (missed ranges expand to skipped:missed). */
export type Account = string;

/** Every row of the ledger, oldest first. */
export async function ledgerOf(store: Store, scheduleId: string): Promise<OccurrenceRow[]> {
  return (await store.listOccurrences(scheduleId, { limit: 100_000 })).reverse();
}

/**
 * Occurrence → the accounts the ledger gives it, in ledger order. `buffered` is an intermediate
 * account (a later `started` settles it); manual triggers (no occurrence) are left out.
 */
export async function accountsOf(store: Store, scheduleId: string): Promise<Map<number, Account[]>> {
  const row = await store.getSchedule(scheduleId);
  if (row === null) throw new Error(`no schedule ${scheduleId}`);
  const { timing } = compiledFor(row);
  const out = new Map<number, Account[]>();
  const add = (o: number, a: Account): void => {
    const list = out.get(o) ?? [];
    list.push(a);
    out.set(o, list);
  };
  for (const r of await ledgerOf(store, scheduleId)) {
    const count = r.count ?? 1;
    if (r.kind === "skipped" && r.reason === "missed" && r.rangeFromMs !== null && r.rangeToMs !== null) {
      // The range must hold exactly `count` occurrences, its ends included.
      let n = 0;
      for (let o: number | null = r.rangeFromMs; o !== null && o <= r.rangeToMs; o = timing.nextAfter(o)) {
        add(o, "skipped:missed");
        n++;
      }
      if (n !== count) throw new Error(`missed row ${r.id} says ${count} but its range holds ${n}`);
      continue;
    }
    if (r.occurrenceMs === null) continue;
    add(r.occurrenceMs, r.kind === "skipped" ? `skipped:${r.reason}` : r.kind);
  }
  return out;
}

/** The final account of each occurrence (buffered then started → started); throws on a double account. */
export function settled(accounts: Map<number, Account[]>): Map<number, Account> {
  const out = new Map<number, Account>();
  for (const [o, list] of accounts) {
    const finals = list.filter((a) => a !== "buffered");
    if (finals.length > 1)
      throw new Error(`occurrence ${new Date(o).toISOString()} accounted twice: ${list.join(", ")}`);
    out.set(o, finals[0] ?? "buffered");
  }
  return out;
}
