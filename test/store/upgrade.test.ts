/**
 * Upgrades (docs/operations.md § Upgrade): every database a release wrote
 * (test/store/fixtures/releases/orbit-<version>.db, made by scripts/make-upgrade-fixture.ts and never
 * regenerated) opens in this release, migrates forward, keeps its executions and ledger, and fires
 * its schedules exactly as the release that wrote it would have: same occurrences, same ids.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/store/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeHarness } from "../scheduler/harness.js";

const RELEASES = fileURLToPath(new URL("./fixtures/releases/", import.meta.url));
const fixtures = readdirSync(RELEASES).filter((f) => f.endsWith(".db"));

describe("databases written by earlier releases [sqlite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-upgrade-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("there is a fixture for at least this release line", () => {
    expect(fixtures).toContain("orbit-0.1.0.db");
  });

  for (const fixture of fixtures) {
    it(`${fixture} opens, migrates to the newest schema and fires as before`, async () => {
      const data = join(dir, fixture);
      mkdirSync(data);
      copyFileSync(join(RELEASES, fixture), join(data, "orbit.db"));
      const store = new SqliteStore({ dataDir: data });
      await store.open();
      const applied = new Database(join(data, "orbit.db"), { readonly: true })
        .prepare("SELECT max(version) AS v FROM orbit_migrations")
        .get() as { v: number };
      expect(applied.v).toBe(loadMigrations("sqlite").length);

      // What the release left: two schedules, 19:00 completed, 19:10 running, the ledger.
      expect((await store.getExecution("every-10m:2026-11-15T19:00:00Z"))?.status).toBe("COMPLETED");
      expect((await store.getExecution("every-10m:2026-11-15T19:10:00Z"))?.status).toBe("RUNNING");
      expect((await store.listOccurrences("every-10m", { limit: 10 })).map((o) => o.kind)).toEqual([
        "started",
        "started",
      ]);

      const h = await makeHarness(store, { now: "2026-11-15T19:10:00.100Z" });
      await h.executions.complete("every-10m:2026-11-15T19:10:00Z", {});
      await h.fireAt("2026-11-15T19:20:00.100Z");
      await h.fireAt("2026-11-15T20:00:00.100Z");
      await h.fireAt("2026-11-15T20:00:00.200Z");
      const ids = (await store.listExecutions({ limit: 100 })).map((e) => e.executionId).sort();
      expect(ids).toEqual([
        "berlin-hourly:2026-11-15T19:00:00Z",
        "berlin-hourly:2026-11-15T20:00:00Z",
        "every-10m:2026-11-15T19:00:00Z",
        "every-10m:2026-11-15T19:10:00Z",
        "every-10m:2026-11-15T19:20:00Z",
        // 19:30 … 19:50 were missed (the clock jumped past them) and 20:00 skipped: 19:20 still runs.
      ]);
      const ledger = await store.listOccurrences("every-10m", { limit: 100 });
      expect(ledger.filter((o) => o.kind === "skipped").reduce((n, o) => n + o.count, 0)).toBe(4);
      await store.close();
    });
  }
});
