/**
 * Writes test/store/fixtures/releases/orbit-<version>.postgres.sql: a PostgreSQL schema made by this
 * release (the same schedules and fires as the SQLite fixture, scripts/make-upgrade-fixture.ts), as
 * `pg_dump --column-inserts` of one schema, for test/store/upgrade-postgres.test.ts
 * (docs/operations.md § Upgrade). Run it once per release and commit the file; never regenerate an
 * old one. Needs pg_dump and a database:
 *   ORBIT_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx scripts/make-upgrade-fixture-postgres.ts
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { VERSION } from "../src/version.js";
import { makeHarness, ORDER_INPUT } from "../test/scheduler/harness.js";

/** The schema name inside the dump; the test loads it under a fresh name of its own. */
export const FIXTURE_SCHEMA = "orbit_release_fixture";

const url = process.env.ORBIT_TEST_DATABASE_URL;
if (!url) throw new Error("set ORBIT_TEST_DATABASE_URL to a PostgreSQL database to write the fixture in");
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`DROP SCHEMA IF EXISTS ${FIXTURE_SCHEMA} CASCADE`);
await admin.query(`CREATE SCHEMA ${FIXTURE_SCHEMA}`);
try {
  const store = new PostgresStore({ connectionString: url, searchPath: FIXTURE_SCHEMA });
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
  await store.close();
  const dump = execFileSync(
    "pg_dump",
    ["--dbname", url, "--schema", FIXTURE_SCHEMA, "--no-owner", "--no-privileges", "--column-inserts"],
    { encoding: "utf8" },
  );
  const file = join("test/store/fixtures/releases", `orbit-${VERSION}.postgres.sql`);
  writeFileSync(file, dump);
  console.log(`wrote ${file}`);
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${FIXTURE_SCHEMA} CASCADE`);
  await admin.end();
}
