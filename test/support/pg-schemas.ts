/**
 * Vitest global setup: the name prefix of the PostgreSQL schemas this run keeps for reuse
 * (test/helpers/db.ts, docs/testing.md § PostgreSQL schemas), `orbit_t_r<pid>_`, and their removal
 * at the end, with the removal of those left by runs that were killed (their process is gone).
 * Nothing happens without ORBIT_TEST_DATABASE_URL, or when the database does not answer (the
 * PostgreSQL suites then fail or skip on their own).
 */
import pg from "pg";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The prefix of the schemas this run may keep and reuse; absent without PostgreSQL. */
    orbitPgSchemaPrefix?: string;
  }
}

async function dropSchemas(url: string, keep: (pid: number) => boolean): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>(
      "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'orbit\\_t\\_r%'",
    );
    for (const { name } of rows) {
      const pid = Number(/^orbit_t_r(\d+)_/.exec(name)?.[1]);
      if (!Number.isInteger(pid) || keep(pid)) continue;
      await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    }
  } catch {
    // No database here: nothing of ours to remove.
  } finally {
    await client.end().catch(() => {});
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.ORBIT_TEST_DATABASE_URL;
  if (!url) return undefined;
  await dropSchemas(url, (pid) => pid !== process.pid && alive(pid));
  project.provide("orbitPgSchemaPrefix", `orbit_t_r${process.pid}_`);
  return () => dropSchemas(url, (pid) => pid !== process.pid);
}
