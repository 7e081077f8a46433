/**
 * What `orbit server`'s first line says it stores in (src/cli/server.ts `storageText`), and the warning
 * for a PostgreSQL URL that names no database: `postgres://postgres@127.0.0.1:5432/` used the
 * database `postgres` (the driver's default, the user's name) while the line said `(postgres
 * 127.0.0.1:5432/)` (a cluster tester's report; docs/operations.md § PostgreSQL URL).
 */
import { describe, expect, it } from "vitest";
import { postgresDatabase, storageText, unnamedDatabaseWarning } from "../../src/cli/server.js";

describe("orbit server: the storage its first line names", () => {
  it("SQLite: the file in --data-dir", () => {
    expect(storageText({})).toBe("sqlite .orbit/orbit.db");
    expect(storageText({ dataDir: "/tmp/d" })).toBe("sqlite /tmp/d/orbit.db");
  });

  it("PostgreSQL with a database in the URL: host and database, never the password", () => {
    expect(storageText({ database: "postgres://orbit:secret@db:5432/orbit" }, { USER: "me" })).toBe(
      "postgres db:5432/orbit",
    );
  });

  it("PostgreSQL without one: the database the driver uses, the user's name", () => {
    const env = { USER: "root" };
    expect(storageText({ database: "postgres://postgres@127.0.0.1:5432/" }, env)).toBe(
      "postgres 127.0.0.1:5432/postgres",
    );
    expect(storageText({ database: "postgresql://127.0.0.1:5432" }, env)).toBe("postgres 127.0.0.1:5432/root");
    expect(storageText({ database: "postgres://127.0.0.1/" }, { ...env, PGUSER: "app" })).toBe(
      "postgres 127.0.0.1/app",
    );
    expect(storageText({ database: "postgres://u@127.0.0.1/?user=q" }, env)).toBe("postgres 127.0.0.1/q");
    expect(storageText({ database: "postgres://u@127.0.0.1/" }, { ...env, PGDATABASE: "orbit" })).toBe(
      "postgres 127.0.0.1/orbit",
    );
  });

  it("resolves as node-postgres does", async () => {
    // The driver's own resolution, with the environment it reads (process.env) set for the case.
    const pg = (await import("pg")).default as unknown as {
      Client: new (o: { connectionString: string }) => { database?: string };
    };
    for (const url of ["postgres://postgres@127.0.0.1:5432/", "postgres://a%20b@h/", "postgres://u@h/db%201"]) {
      expect(postgresDatabase(new URL(url), process.env).name, url).toBe(
        new pg.Client({ connectionString: url }).database,
      );
    }
  });
});

describe("orbit server: a PostgreSQL URL that names no database", () => {
  it("warns, naming the database used and the URL that names it", () => {
    const warning = unnamedDatabaseWarning("postgres://postgres:pw@127.0.0.1:5432/", false, { USER: "root" });
    expect(warning).toBe(
      `orbit: --database names no database, so PostgreSQL's default is used: "postgres" (the user's name); Orbit keeps its tables there. Name the database at the end of the URL (…127.0.0.1:5432/postgres) to choose it\n`,
    );
    expect(warning).not.toContain("pw");
    expect(unnamedDatabaseWarning("postgres://h/", true, { USER: "root", PGDATABASE: "x" })).toMatch(
      /^orbit: ORBIT_DATABASE_URL names no database, .*: "x" \(PGDATABASE\);/,
    );
  });

  it("is silent when the URL names one, and leaves refusals to the server", () => {
    expect(unnamedDatabaseWarning("postgres://postgres@127.0.0.1:5432/orbit", false, {})).toBeNull();
    expect(unnamedDatabaseWarning("mysql://h/", false, {})).toBeNull();
    expect(unnamedDatabaseWarning("not a url", false, {})).toBeNull();
    expect(unnamedDatabaseWarning("postgres:", false, { USER: "root" })).toBeNull();
  });
});
