import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import {
  type AppliedMigration,
  additiveViolations,
  loadMigrations,
  migrationsDir,
  newerMigrations,
  pendingMigrations,
} from "../../src/store/migrations.js";
import { migrateSqlite } from "../../src/store/sqlite/migrate.js";
import { describeEachDialect, dialects, PG_URL, postgresDialect, type TestLocation, useStore } from "../helpers/db.js";
import { ADDITIVE_NEXT, BREAKING_NEXT, migrationDirWith, nextNumber } from "./migration-dirs.js";

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

  it("declare from 0010 on whether they are additive, and the additive ones are (docs/operations.md § Upgrade)", () => {
    for (const dialect of ["sqlite", "postgres"] as const) {
      for (const m of loadMigrations(dialect)) {
        const file = `${migrationsDir(dialect)}${String(m.version).padStart(4, "0")}_${m.name}.sql`;
        if (m.version >= 10) {
          expect(
            readFileSync(file, "utf8"),
            `${file} must declare "-- orbit: additive" or "-- orbit: breaking"`,
          ).toMatch(/^-- orbit: (additive|breaking)$/m);
        }
        if (m.additive) expect(additiveViolations(m.sql), file).toEqual([]);
      }
    }
    // The migration that records the declaration is itself additive.
    expect(loadMigrations("postgres").find((m) => m.name === "migration_compat")?.additive).toBe(true);
  });

  it("tell additive SQL from SQL an older server cannot run beside", () => {
    expect(
      additiveViolations(`-- a comment; with a semicolon
        CREATE TABLE orbit_x (id TEXT PRIMARY KEY, n INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS orbit_x_n ON orbit_x (n) WHERE n > 0;
        ALTER TABLE orbit_schedules ADD COLUMN note TEXT;
        ALTER TABLE orbit_schedules ADD COLUMN weight INTEGER NOT NULL DEFAULT 1;`),
    ).toEqual([]);
    const refused = [
      "ALTER TABLE orbit_schedules ADD COLUMN weight INTEGER NOT NULL",
      "ALTER TABLE orbit_schedules DROP COLUMN paused",
      "ALTER TABLE orbit_executions RENAME COLUMN cancel_reason TO cancel_note",
      "ALTER TABLE orbit_schedules ADD COLUMN a TEXT, ADD COLUMN b TEXT",
      "ALTER TABLE orbit_schedules ADD COLUMN k TEXT UNIQUE",
      "CREATE UNIQUE INDEX orbit_u ON orbit_schedules (workflow)",
      "DROP INDEX orbit_schedules_due",
      "UPDATE orbit_schedules SET paused = FALSE",
      "CREATE TRIGGER t AFTER INSERT ON orbit_schedules FOR EACH ROW EXECUTE FUNCTION f()",
    ];
    for (const sql of refused) expect(additiveViolations(sql), sql).toHaveLength(1);
  });

  it("refuse a file declared additive whose SQL is not", () => {
    const bad = migrationDirWith("sqlite", {
      [`${nextNumber("sqlite")}_bad.sql`]: BREAKING_NEXT.replace("orbit: breaking", "orbit: additive"),
    });
    try {
      expect(() => loadMigrations("sqlite", bad.dir)).toThrow(/declared "-- orbit: additive" but .*RENAME COLUMN/);
    } finally {
      bad.remove();
    }
  });

  it("let an older server run beside a newer release's migrations only when all are recorded additive", () => {
    const all = loadMigrations("sqlite");
    const records: AppliedMigration[] = all.map((m) => ({ version: m.version, name: m.name, additive: m.additive }));
    const next = all.length + 1;
    const newer = (additive: boolean | null): AppliedMigration => ({ version: next, name: "next_thing", additive });
    expect(newerMigrations(all, records, "sqlite")).toEqual([]);
    expect(newerMigrations(all, [...records, newer(true)], "sqlite")).toEqual([newer(true)]);
    expect(pendingMigrations(all, [...records, newer(true)], "sqlite")).toEqual([]);
    const label = `${String(next).padStart(4, "0")}_next_thing`;
    for (const additive of [false, null]) {
      expect(() => newerMigrations(all, [...records, newer(additive)], "sqlite")).toThrow(
        `migration ${label} applied but this Orbit knows only up to ${all.length}: it was written by a newer Orbit; upgrade Orbit to open it (${label} is not recorded as additive`,
      );
    }
    // Its own migrations must be the database's first ones: same numbers, same names.
    const renamed = records.map((r) => (r.version === all.length ? { ...r, name: "someone_elses" } : r));
    expect(() => newerMigrations(all, [...renamed, newer(true)], "sqlite")).toThrow(
      /someone_elses is not this Orbit's/,
    );
    const missing = records.filter((r) => r.version !== 2);
    expect(() => newerMigrations(all, [...missing, newer(true)], "sqlite")).toThrow(
      /0002_worker_protocol is not applied/,
    );
  });

  it("SQLite: a file migrated by a newer release opens when its new migration is additive, and not otherwise", () => {
    for (const [sql, opens] of [
      [ADDITIVE_NEXT, true],
      [BREAKING_NEXT, false],
    ] as const) {
      const newer = migrationDirWith("sqlite", { [`${nextNumber("sqlite")}_next.sql`]: sql });
      const db = new Database(":memory:");
      try {
        expect(migrateSqlite(db, newer.dir).applied).toHaveLength(loadMigrations("sqlite").length + 1);
        const additive = db.prepare("SELECT version, additive FROM orbit_migrations ORDER BY version").all();
        expect(additive.at(-1)).toEqual({ version: loadMigrations("sqlite").length + 1, additive: opens ? 1 : 0 });
        expect(additive[0]).toEqual({ version: 1, additive: 0 });
        if (opens) {
          const older = migrateSqlite(db);
          expect(older).toEqual({
            applied: [],
            newer: [{ version: loadMigrations("sqlite").length + 1, name: "next", additive: true }],
            log: { applied: [], created: false },
          });
        } else {
          expect(() => migrateSqlite(db)).toThrow(
            /newer Orbit; upgrade Orbit to open it \(\d{4}_next is not recorded as additive/,
          );
        }
      } finally {
        db.close();
        newer.remove();
      }
    }
  });

  it("SQLite: says which migrations it is about to apply to an existing file, before applying them", () => {
    const newer = migrationDirWith("sqlite", { [`${nextNumber("sqlite")}_next.sql`]: BREAKING_NEXT });
    const db = new Database(":memory:");
    try {
      const told: unknown[] = [];
      migrateSqlite(db, undefined, (underWay) => told.push(underWay));
      expect(told).toEqual([]); // a new file is created, not upgraded
      migrateSqlite(db, newer.dir, (underWay) => {
        // Before: the migration is not recorded yet.
        const recorded = db.prepare("SELECT count(*) AS n FROM orbit_migrations").get() as { n: number };
        told.push({ ...underWay, recorded: recorded.n });
      });
      const label = `${nextNumber("sqlite")}_next`;
      expect(told).toEqual([
        { pending: [label], breaking: [label], otherSessions: 0, recorded: loadMigrations("sqlite").length },
      ]);
    } finally {
      db.close();
      newer.remove();
    }
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
