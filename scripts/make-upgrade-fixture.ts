/**
 * Writes test/store/fixtures/releases/orbit-<version>.db: a SQLite database made by this release,
 * for the upgrade test (test/store/upgrade.test.ts, docs/operations.md § Upgrade). Run it once per
 * release and commit the file; never regenerate an old one (it stands for what users have on disk).
 *   node --import tsx scripts/make-upgrade-fixture.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupSqlite } from "../src/store/sqlite/backup.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { VERSION } from "../src/version.js";
import { makeHarness, ORDER_INPUT } from "../test/scheduler/harness.js";

const dir = mkdtempSync(join(tmpdir(), "orbit-fixture-"));
const store = new SqliteStore({ dataDir: dir });
await store.open();
const h = await makeHarness(store, { now: "2026-11-15T18:51:00.000Z" });
await h.scheduler.schedules.create({
  schedule_id: "every-10m",
  workflow: "OrderProcessing",
  interval: "10m",
  input: ORDER_INPUT,
});
await h.scheduler.schedules.create({
  schedule_id: "berlin-hourly",
  workflow: "OrderProcessing",
  cron: "0 * * * *",
  timezone: "Europe/Berlin",
  overlap: "allow",
  input: ORDER_INPUT,
});
await h.fireAt("2026-11-15T19:00:00.100Z");
await h.executions.complete("every-10m:2026-11-15T19:00:00Z", { ok: true });
await h.fireAt("2026-11-15T19:10:00.100Z");
const file = join("test/store/fixtures/releases", `orbit-${VERSION}.db`);
rmSync(file, { force: true });
await backupSqlite(store.filename, file);
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log(`wrote ${file}`);
