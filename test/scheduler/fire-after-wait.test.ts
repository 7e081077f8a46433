/**
 * A fire that waits for its rows (another session's lock on the schedules table, the SQLite queue
 * behind a long transaction) decides at the time after the wait: it read the clock before, so an
 * occurrence 20 s late was judged within a 10 s misfire grace and started, and its ledger row and
 * the fire-lag metric said it was on time.
 */
import pg from "pg";
import { expect, it } from "vitest";
import { parseInstant } from "../../src/time/format.js";
import { describeEachDialect, PG_URL, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

const t = (s: string): number => parseInstant(s);

describeEachDialect("scheduler: a fire that waited for its rows", (dialect) => {
  const db = useStore(dialect);

  it("decides at the time after the wait: 20 s late is missed under a 10 s grace, recorded then", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T18:51:00.347Z", graceMs: 10_000 });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      cron: "* * * * *",
      catchup: "skip_missed",
    });
    // Hold what the fire needs: the table on PostgreSQL (as LOCK TABLE did), the store on SQLite.
    let release: () => Promise<void>;
    if (dialect.name === "postgres") {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(
        `BEGIN; LOCK TABLE ${db.location.env.ORBIT_TEST_PG_SCHEMA}.orbit_schedules IN ACCESS EXCLUSIVE MODE`,
      );
      release = async () => {
        await admin.query("COMMIT");
        await admin.end();
      };
    } else {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      let held!: () => void;
      const holding = new Promise<void>((resolve) => {
        held = resolve;
      });
      const tx = db.store.transaction(async () => {
        held();
        await gate;
      });
      await holding;
      release = async () => {
        open();
        await tx;
      };
    }
    h.clock.set(t("2026-11-15T18:52:00.500Z"));
    const firing = h.scheduler.loop.fireDue();
    // The fire waits; the threshold for reading the clock again is 50 ms of real waiting.
    await new Promise((resolve) => setTimeout(resolve, 120));
    h.clock.set(t("2026-11-15T18:52:20.500Z"));
    await release();
    await firing;
    const [row] = await db.store.listOccurrences("s", { limit: 10 });
    expect(row).toMatchObject({ kind: "skipped", reason: "missed", occurrenceMs: t("2026-11-15T18:52:00Z") });
    expect(row?.recordedMs).toBe(t("2026-11-15T18:52:20.500Z"));
    expect((await h.scheduler.schedules.get("s")).fired).toBe(0);
  });
});
