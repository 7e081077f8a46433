/**
 * Upgrades on PostgreSQL (docs/operations.md § Upgrade): every schema a release wrote
 * (test/store/fixtures/releases/orbit-<version>.postgres.sql, `pg_dump --column-inserts` made by
 * scripts/make-upgrade-fixture-postgres.ts and never regenerated) loads into a fresh schema, opens
 * in this release, migrates forward, keeps its executions and ledger, and fires its schedules as the
 * release that wrote it would have. Needs ORBIT_TEST_DATABASE_URL.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/store/migrations.js";
import type { MigrationsUnderWay } from "../../src/store/postgres/migrate.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { PG_URL } from "../helpers/db.js";
import { adminSql, renamed } from "./pg-admin.js";
import { firesAsTheReleaseDid } from "./upgrade-scenario.js";

const RELEASES = fileURLToPath(new URL("./fixtures/releases/", import.meta.url));
const fixtures = readdirSync(RELEASES).filter((f) => f.endsWith(".postgres.sql"));
/** The schema name the fixture script dumps under. */
const FIXTURE_SCHEMA = "orbit_release_fixture";

if (!PG_URL) console.warn("skipped: test/store/upgrade-postgres.test.ts: ORBIT_TEST_DATABASE_URL is not set");

describe.skipIf(!PG_URL)("schemas written by earlier releases [postgres]", () => {
  it("there is a fixture for at least this release line", () => {
    expect(fixtures).toContain("orbit-0.1.0.postgres.sql");
  });

  for (const fixture of fixtures) {
    it(`${fixture} loads, migrates to the newest schema and fires as before`, async () => {
      const schema = `orbit_upgrade_${randomBytes(5).toString("hex")}`;
      await adminSql(renamed(readFileSync(`${RELEASES}${fixture}`, "utf8"), FIXTURE_SCHEMA, schema));
      try {
        // Another Orbit session on the database, as a server of the old release still running.
        const older = new pg.Client({ connectionString: PG_URL as string, application_name: "orbit" });
        await older.connect();
        const said: MigrationsUnderWay[] = [];
        const store = new PostgresStore({
          connectionString: PG_URL as string,
          searchPath: schema,
          onMigrating: (underWay) => said.push(underWay),
        });
        try {
          await store.open();
        } finally {
          await older.end();
        }
        expect(await store.appliedMigrations()).toEqual(loadMigrations("postgres").map((m) => m.version));
        // Said before they ran: which, the breaking ones among them, and the other sessions open.
        expect(said).toHaveLength(1);
        expect(said[0]?.pending.length).toBeGreaterThan(0);
        expect(said[0]?.breaking).toContain("0016_json_as_given");
        expect(said[0]?.otherSessions).toBeGreaterThanOrEqual(1);
        await firesAsTheReleaseDid(store);
        await store.close();
      } finally {
        await adminSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      }
    });
  }
});
