/**
 * Back up and restore on PostgreSQL with the database's own tools (docs/operations.md § Back up and
 * restore): `pg_dump -Fc` of Orbit's schema while the store is open and firing, `pg_restore` into an
 * empty database, and Orbit on the restored copy decides every occurrence since the backup once by
 * its catch-up policy (skip_missed: the missed ones in the ledger, the next one started once).
 * Needs ORBIT_TEST_DATABASE_URL and pg_dump / pg_restore on the PATH.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { PG_URL } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "../scheduler/harness.js";
import { adminSql } from "./pg-admin.js";

if (!PG_URL) console.warn("skipped: test/store/backup-postgres.test.ts: ORBIT_TEST_DATABASE_URL is not set");

describe.skipIf(!PG_URL)("backup and restore [postgres]", () => {
  it("pg_dump while firing, pg_restore into an empty database, then fire: every occurrence since is decided once", async () => {
    const tag = randomBytes(5).toString("hex");
    const schema = `orbit_bk_${tag}`;
    const database = `orbit_restore_${tag}`;
    const restoredUrl = new URL(PG_URL as string);
    restoredUrl.pathname = `/${database}`;
    const dir = mkdtempSync(join(tmpdir(), "orbit-pgbackup-"));
    await adminSql(`CREATE SCHEMA ${schema}`);
    try {
      const live = new PostgresStore({ connectionString: PG_URL as string, searchPath: schema });
      await live.open();
      const h = await makeHarness(live);
      await h.scheduler.schedules.create({
        schedule_id: "s",
        workflow: "OrderProcessing",
        interval: "10m",
        input: ORDER_INPUT,
      });
      await h.fireAt("2026-11-15T19:00:00.100Z");
      await h.executions.complete("s:2026-11-15T19:00:00Z", {});
      await h.fireAt("2026-11-15T19:10:00.100Z");
      await h.executions.complete("s:2026-11-15T19:10:00Z", {});
      // pg_dump reads one snapshot while the store stays open; the 19:20 fire after it is not in it.
      const dump = join(dir, "orbit.dump");
      execFileSync("pg_dump", ["--dbname", PG_URL as string, "--schema", schema, "-Fc", "--file", dump]);
      await h.fireAt("2026-11-15T19:20:00.100Z");
      expect((await live.getExecution("s:2026-11-15T19:20:00Z"))?.status).toBe("RUNNING");
      await live.close();

      await adminSql(`CREATE DATABASE ${database}`);
      execFileSync("pg_restore", ["--dbname", restoredUrl.toString(), "--no-owner", dump]);
      const restored = new PostgresStore({ connectionString: restoredUrl.toString(), searchPath: schema });
      await restored.open();
      try {
        expect(
          (await restored.listExecutions({ scheduleId: "s", limit: 100 })).map((e) => e.executionId).sort(),
        ).toEqual(["s:2026-11-15T19:00:00Z", "s:2026-11-15T19:10:00Z"]);
        // The server restarts at 19:35: 19:20 and 19:30 came due since the backup (skip_missed).
        const r = await makeHarness(restored, { now: "2026-11-15T19:35:00.000Z" });
        await r.fireAt("2026-11-15T19:35:00.000Z");
        await r.fireAt("2026-11-15T19:35:00.000Z");
        await r.fireAt("2026-11-15T19:40:00.100Z");
        await r.fireAt("2026-11-15T19:40:00.200Z");
        const ids = (await restored.listExecutions({ scheduleId: "s", limit: 100 })).map((e) => e.executionId).sort();
        expect(ids).toEqual(["s:2026-11-15T19:00:00Z", "s:2026-11-15T19:10:00Z", "s:2026-11-15T19:40:00Z"]);
        const ledger = await restored.listOccurrences("s", { limit: 100 });
        const started = ledger.filter((o) => o.kind === "started").length;
        const missed = ledger
          .filter((o) => o.kind === "skipped" && o.reason === "missed")
          .reduce((n, o) => n + o.count, 0);
        // 19:00 … 19:40, five occurrences, each accounted for once: three started, 19:20 and 19:30 missed.
        expect({ started, missed }).toEqual({ started: 3, missed: 2 });
      } finally {
        await restored.close();
      }
    } finally {
      await adminSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await adminSql(`DROP DATABASE IF EXISTS ${database}`);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
