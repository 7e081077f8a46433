/**
 * Orbit's PostgreSQL advisory locks are per schema (docs/storage.md § Migrations, § Locking): a
 * deployment opening its store, or starting under --max-active-executions, does not wait for a
 * migration or an admission in another schema of the same database. With one fixed key every test
 * schema's open waited for any other's migration.
 */
import pg from "pg";
import { it } from "vitest";
import { PG_URL, postgresDialect, type TestLocation } from "../helpers/db.js";

const MIGRATIONS = 0x6f726231;
const ADMISSION = 0x6f726232;

it.skipIf(!postgresDialect.enabled)(
  "a schema's migration and admission locks do not hold up another schema's",
  async () => {
    const a = await postgresDialect.createLocation();
    const b = await postgresDialect.createLocation();
    const holder = new pg.Client({ connectionString: PG_URL });
    await holder.connect();
    try {
      const schemaOf = (l: TestLocation) => l.env.ORBIT_TEST_PG_SCHEMA as string;
      // Another deployment (schema a) holds its migration and admission locks, and the old fixed key.
      for (const kind of [MIGRATIONS, ADMISSION]) {
        await holder.query("SELECT pg_advisory_lock($1, hashtext($2))", [kind, schemaOf(a)]);
      }
      await holder.query("SELECT pg_advisory_lock(4785604130441)");
      // Schema b opens (migrating), and admits a start under a limit, meanwhile.
      const store = await b.open();
      await store.transaction((tx) => tx.lockExecutionAdmission());
      // The same lock of b's own schema is the one its open takes: held, it makes the open wait.
      await holder.query("SELECT pg_advisory_lock($1, hashtext($2))", [MIGRATIONS, schemaOf(b)]);
      const reopening = b.open();
      const waiting = async () =>
        (
          await holder.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1::oid",
            [MIGRATIONS],
          )
        ).rows[0].n as number;
      while ((await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await holder.query("SELECT pg_advisory_unlock($1, hashtext($2))", [MIGRATIONS, schemaOf(b)]);
      await reopening;
    } finally {
      await holder.end();
      await a.destroy();
      await b.destroy();
    }
  },
);
