/**
 * A schedule search's `total` and `counts` agree with its own rows on PostgreSQL (docs/api.md §
 * Listing and searching schedules). The search reads the rows' sizes, the page and the counts in
 * three statements; under READ COMMITTED each read its own snapshot, so a tester's one-page search
 * (`limit=1000`) beside writers creating and deleting schedules said `total 57` with 56 rows, 4 of
 * 500 times. They now read one REPEATABLE READ READ ONLY snapshot (Store.readSnapshot).
 */
import { describe, expect, it } from "vitest";
import { listSchedules } from "../../src/scheduler/schedule-list.js";
import type { Store, StoreOps } from "../../src/store/store.js";
import { postgresDialect, sqliteDialect, useStore } from "../helpers/db.js";
import { schedule, T0 } from "../store/fixtures/records.js";

/** A stored schedule whose settings a view can read. */
function stored(id: string, state: "active" | "paused" = "active") {
  return schedule(id, {
    state,
    paused: state === "paused",
    spec: {
      schedule_id: id,
      workflow: "W",
      input: {},
      overlap: "skip",
      catchup: "skip_missed",
      paused: state === "paused",
      interval: "10s",
    },
  });
}

const now = async () => T0;

/** The answer's own figures against its rows: each state's count, and `total`. */
function disagreement(page: Awaited<ReturnType<typeof listSchedules>>): string | null {
  const rows = { active: 0, paused: 0, ended: 0 };
  for (const s of page.schedules) rows[s.state as keyof typeof rows]++;
  if (page.total !== page.schedules.length) return `total ${page.total} with ${page.schedules.length} rows`;
  if (JSON.stringify(page.counts) !== JSON.stringify(rows))
    return `counts ${JSON.stringify(page.counts)} with rows ${JSON.stringify(rows)}`;
  return null;
}

/**
 * `ops` whose scheduleSizes creates schedule `aa-new` (sorting first) through `store` once it has
 * read, as a writer on another connection would between two of the search's reads.
 */
function meddling<T extends StoreOps>(ops: T, store: Store): T {
  let done = false;
  return new Proxy(ops, {
    get(target, prop, receiver) {
      if (prop === "scheduleSizes")
        return async (...args: Parameters<StoreOps["scheduleSizes"]>) => {
          const sizes = await target.scheduleSizes(...args);
          if (!done) {
            done = true;
            expect(await store.insertSchedule(stored("aa-new"))).toBe(true);
          }
          return sizes;
        };
      if (prop === "readSnapshot" && store.readSnapshot)
        return <R>(fn: (o: StoreOps) => Promise<R>) => store.readSnapshot!((o) => fn(meddling(o, store)));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe.skipIf(!postgresDialect.enabled)("a schedule search reads one snapshot [postgres]", () => {
  const db = useStore(postgresDialect);

  it("counts what its page holds when a schedule is created between its reads", async () => {
    for (const id of ["b", "c", "d"]) await db.store.insertSchedule(stored(id));
    const page = await listSchedules(meddling(db.store, db.store), now, { sort: "id", limit: 1000 });
    expect(disagreement(page)).toBeNull();
    // The search read the table as it was when it began; the next one sees the new schedule.
    expect(page.schedules.map((s) => s.schedule_id)).toEqual(["b", "c", "d"]);
    const after = await listSchedules(db.store, now, { sort: "id", limit: 1000 });
    expect(after.total).toBe(4);
  });

  it("reads on one snapshot while another connection commits (Store.readSnapshot)", async () => {
    await db.store.insertSchedule(stored("a"));
    const seen = await db.store.readSnapshot!(async (ops) => {
      const before = await ops.listSchedules({ limit: 10 });
      await db.store.insertSchedule(stored("b"));
      await db.store.deleteSchedule("a");
      return [before, await ops.listSchedules({ limit: 10 })].map((rows) => rows.map((r) => r.scheduleId));
    });
    expect(seen).toEqual([["a"], ["a"]]);
    expect((await db.store.listSchedules({ limit: 10 })).map((r) => r.scheduleId)).toEqual(["b"]);
  });

  it("never counts other rows than it returns while schedules are created, paused and deleted", () =>
    racingWriters(db.store));
});

describe("a schedule search reads one snapshot [sqlite]", () => {
  const db = useStore(sqliteDialect);

  // Its one connection runs one statement at a time, not one reader: a write came between the
  // search's reads ("total 9 with 7 rows") until they ran as one transaction.
  it("never counts other rows than it returns while schedules are created, paused and deleted", () =>
    racingWriters(db.store));
});

/** 150 searches beside a writer deleting and re-creating 40 schedules: none disagrees with itself. */
async function racingWriters(store: Store): Promise<void> {
  for (let i = 0; i < 40; i++) await store.insertSchedule(stored(`s-${String(i).padStart(2, "0")}`));
  let stop = false;
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      // Rounds over the 40 schedules: deleting each, then creating it again (a third of them paused).
      const id = `s-${String(i % 40).padStart(2, "0")}`;
      if (Math.floor(i / 40) % 2 === 0) await store.deleteSchedule(id);
      else await store.insertSchedule(stored(id, i % 3 === 0 ? "paused" : "active"));
    }
  })();
  const seen: string[] = [];
  try {
    for (let i = 0; i < 150; i++) {
      const sort = (["id", "updated", "next_fire"] as const)[i % 3];
      const problem = disagreement(await listSchedules(store, now, { sort, limit: 1000 }));
      if (problem !== null) seen.push(`${sort}: ${problem}`);
    }
  } finally {
    stop = true;
    await writer;
  }
  expect(seen).toEqual([]);
}
