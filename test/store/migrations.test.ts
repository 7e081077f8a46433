import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { loadMigrations, migrationsDir, pendingMigrations } from "../../src/store/migrations.js";
import { describeEachDialect, dialects, PG_URL, postgresDialect, type TestLocation, useStore } from "../helpers/db.js";

type Columns = Record<string, string[]>;

function sqliteColumns(location: TestLocation): Columns {
  const db = new Database(location.env.ORBIT_TEST_SQLITE_FILE!, { readonly: true });
  try {
    const tables = db
      .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'orbit_%' ORDER BY name")
      .pluck()
      .all();
    return Object.fromEntries(
      tables.map((t) => [
        t,
        db
          .prepare<[], { name: string }>(`PRAGMA table_info(${t})`)
          .all()
          .map((c) => c.name)
          .sort(),
      ]),
    );
  } finally {
    db.close();
  }
}

async function postgresColumns(location: TestLocation): Promise<Columns> {
  const client = new pg.Client({ connectionString: location.env.ORBIT_TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, column_name",
      [location.env.ORBIT_TEST_PG_SCHEMA],
    );
    const columns: Columns = {};
    for (const r of rows) {
      columns[r.table_name] = [...(columns[r.table_name] ?? []), r.column_name];
    }
    return columns;
  } finally {
    await client.end();
  }
}

describe("migrations on disk", () => {
  it("resolve next to the package and are numbered alike in both dialects", () => {
    expect(migrationsDir("sqlite")).toMatch(/[/\\]migrations[/\\]sqlite[/\\]$/);
    const sqlite = loadMigrations("sqlite").map((m) => `${m.version}_${m.name}`);
    const postgres = loadMigrations("postgres").map((m) => `${m.version}_${m.name}`);
    expect(sqlite.length).toBeGreaterThan(0);
    expect(postgres).toEqual(sqlite);
  });

  it("refuse a database migrated by a newer Orbit", () => {
    const all = loadMigrations("sqlite");
    expect(pendingMigrations(all, [], "sqlite")).toHaveLength(all.length);
    expect(
      pendingMigrations(
        all,
        all.map((m) => m.version),
        "sqlite",
      ),
    ).toEqual([]);
    expect(() => pendingMigrations(all, [all.length + 1], "sqlite")).toThrow(/newer Orbit/);
  });

  it.skipIf(!postgresDialect.enabled)("end with the same tables and columns in both dialects", async () => {
    const sqlite = await dialects[0]!.createLocation();
    const postgres = await postgresDialect.createLocation();
    try {
      await sqlite.open();
      await postgres.open();
      const a = sqliteColumns(sqlite);
      const b = await postgresColumns(postgres);
      expect(Object.keys(a)).toContain("orbit_schedules");
      expect(b).toEqual(a);
    } finally {
      await sqlite.destroy();
      await postgres.destroy();
    }
  });
  if (!PG_URL)
    console.warn(
      'skipped: "end with the same tables and columns in both dialects": ORBIT_TEST_DATABASE_URL is not set',
    );
});

describeEachDialect("migrating on open", (dialect) => {
  const db = useStore(dialect);

  it("applies each migration once: a reopen finds nothing to do and keeps the data", async () => {
    await db.store.insertWorkflow({ name: "W", version: "1.0.0", inputSchema: null, description: null, createdMs: 1 });
    await db.store.close();
    const again = await db.location.open();
    expect(await again.getWorkflow("W", "1.0.0")).not.toBeNull();
    const third = await db.location.open();
    expect((await third.listWorkflows()).length).toBe(1);
  });

  it("lets several servers open a fresh database at the same time", async () => {
    const fresh = await dialect.createLocation();
    try {
      const stores = await Promise.all([fresh.open(), fresh.open(), fresh.open()]);
      await Promise.all(
        stores.map((s, i) =>
          s.insertWorkflow({ name: `W${i}`, version: "1.0.0", inputSchema: null, description: null, createdMs: i }),
        ),
      );
      expect((await stores[0]!.listWorkflows()).map((w) => w.name)).toEqual(["W0", "W1", "W2"]);
    } finally {
      await fresh.destroy();
    }
  });
});
