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
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "../../src/server/server.js";
import { loadMigrations, migrationLabel } from "../../src/store/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { firesAsTheReleaseDid } from "./upgrade-scenario.js";

const RELEASES = fileURLToPath(new URL("./fixtures/releases/", import.meta.url));
const fixtures = readdirSync(RELEASES).filter((f) => f.endsWith(".db"));
// PostgreSQL fixtures (orbit-<version>.postgres.sql): test/store/upgrade-postgres.test.ts.

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

      await firesAsTheReleaseDid(store);
      await store.close();
    });
  }

  it("the server's log names the migrations an upgrade applied; a new database's says how many", async () => {
    // An upgrade changed the database and logged nothing about it.
    const starts = async (data: string) => {
      const lines: Record<string, unknown>[] = [];
      const logger = pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
      const server = await startServer({ port: 0, dataDir: data, logger });
      await server.close();
      return lines.filter((l) => /database/.test(String(l.msg)) && l.msg !== "store opened");
    };
    const all = loadMigrations("sqlite");
    const data = join(dir, "logged-upgrade");
    mkdirSync(data);
    copyFileSync(join(RELEASES, "orbit-0.1.0.db"), join(data, "orbit.db"));
    const had = new Database(join(data, "orbit.db"), { readonly: true })
      .prepare("SELECT max(version) AS v FROM orbit_migrations")
      .get() as { v: number };
    const upgrade = all.filter((m) => m.version > had.v).map(migrationLabel);
    expect(upgrade.length).toBeGreaterThan(0);
    // Said before the migrations run (they may take a while) and after, as on PostgreSQL.
    expect(await starts(data)).toEqual([
      expect.objectContaining({ msg: "upgrading the database", migrations: upgrade }),
      expect.objectContaining({ msg: "upgraded the database", migrations: upgrade }),
    ]);
    expect(await starts(data)).toEqual([]);
    expect(await starts(join(dir, "logged-new"))).toEqual([
      expect.objectContaining({ msg: "created the database's tables", migrations: all.length }),
    ]);
  });
});
