/**
 * POST /v1/schedules/apply with `kind: workflow` entries and `allow_unregistered`: a file's schedules
 * may name a workflow no worker has registered when the file declares it, or when the caller
 * accepts that they wait for it. On SQLite and, with ORBIT_TEST_DATABASE_URL, PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

if (!PG_URL)
  console.warn("skipped: test/api/schedules-apply-workflows.test.ts on PostgreSQL: ORBIT_TEST_DATABASE_URL is not set");

const dialects = [
  { name: "sqlite", enabled: true },
  { name: "postgres", enabled: PG_URL !== undefined },
];

const needs = (field: string) => ({
  type: "object",
  required: [field],
  properties: { [field]: { type: "string" } },
});

describe.each(dialects)("apply with workflows on $name", ({ name, enabled }) => {
  let t: TestServer;
  const schema = `orbit_applyw_${randomBytes(5).toString("hex")}`;
  const apply = (body: Record<string, unknown>) => t.call("POST", "/v1/schedules/apply", body);

  beforeEach(async () => {
    if (!enabled) return;
    if (name === "postgres") {
      await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({ database: PG_URL as string, databaseSchema: schema });
    } else t = await startTestServer();
  });
  afterEach(async () => {
    if (!enabled) return;
    await t.stop();
    if (name === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  const file = {
    workflows: [{ name: "Report", version: "1.0.0", input_schema: needs("day") }],
    schedules: [{ schedule_id: "weekly", workflow: "Report", cron: "0 6 * * MON", input: { day: "mon" } }],
  };

  it.skipIf(!enabled)(
    "registers the file's workflows in the same transaction, so its schedules may name them",
    async () => {
      const dry = await apply({ ...file, dry_run: true });
      expect(dry.status).toBe(200);
      expect(dry.body.workflows).toEqual([{ action: "register", name: "Report", version: "1.0.0" }]);
      expect(dry.body.steps).toEqual([{ action: "create", schedule_id: "weekly" }]);
      expect((await t.call("GET", "/v1/workflows/Report")).status).toBe(404);

      const real = await apply(file);
      expect(real.body.workflows).toEqual(dry.body.workflows);
      expect((await t.call("GET", "/v1/workflows/Report")).status).toBe(200);
      expect((await t.call("GET", "/v1/schedules/weekly")).body.last_error).toBeNull();
      expect((await apply(file)).body.workflows).toEqual([{ action: "unchanged", name: "Report", version: "1.0.0" }]);

      // The declared schema checks the file's inputs; a different schema for the same version is refused whole.
      const badInput = await apply({ ...file, schedules: [{ ...file.schedules[0], schedule_id: "w2", input: {} }] });
      expect(badInput.status).toBe(400);
      expect(badInput.body.message).toMatch(/^schedules\[0\] \(w2\): input does not match Report@1\.0\.0/);
      const clash = await apply({
        workflows: [{ name: "Report", version: "1.0.0", input_schema: needs("week") }],
        schedules: [{ schedule_id: "w3", workflow: "Report", cron: "0 6 * * MON", input: { week: "1" } }],
      });
      expect(clash.status).toBe(409);
      expect(clash.body.message).toMatch(/^workflows\[0\]: workflow Report@1\.0\.0 is already registered/);
      expect((await t.call("GET", "/v1/schedules/w3")).status).toBe(404);
    },
  );

  it.skipIf(!enabled)(
    "refuses an unregistered workflow unless allow_unregistered; then the schedule waits for it",
    async () => {
      const later = { schedule_id: "later", workflow: "Later", interval: "10s" };
      const refused = await apply({ schedules: [later] });
      expect(refused.status).toBe(404);
      expect(refused.body.message).toBe(
        "schedules[0] (later): workflow Later is not registered: start a worker that runs it (a worker registers its workflows), or orbit workflow register Later@<version>",
      );

      const waiting = await apply({ schedules: [later], allow_unregistered: true });
      expect(waiting.status).toBe(200);
      const why =
        "workflow Later is not registered: start a worker that runs it (a worker registers its workflows), or orbit workflow register Later@<version>; no execution starts until it is (applied with --allow-unregistered)";
      expect(waiting.body.steps).toEqual([{ action: "create", schedule_id: "later", waiting: why }]);
      expect((await t.call("GET", "/v1/schedules/later")).body).toMatchObject({ last_error: why, fired: 0 });

      // A worker (here: a registration) arrives; the next occurrence starts.
      expect((await t.call("POST", "/v1/workflows", { name: "Later", version: "1.0.0" })).status).toBe(201);
      t.clock.set(Date.parse("2026-11-15T18:51:10Z"));
      const s = await t.until(
        async () => (await t.call("GET", "/v1/schedules/later")).body,
        (b) => b.fired === 1,
        "the first fire after registration",
      );
      expect(s).toMatchObject({ last_execution_id: "later:2026-11-15T18:51:10Z", last_error: null });
    },
  );

  it.skipIf(!enabled)(
    "a dry run's registration leaves no trace: a later schema of that version is the one enforced",
    async () => {
      const dry = await apply({
        workflows: [{ name: "Strict", version: "1.0.0", input_schema: needs("a") }],
        schedules: [{ schedule_id: "s1", workflow: "Strict", interval: "1m", input: { a: "x" } }],
        dry_run: true,
      });
      expect(dry.status).toBe(200);
      expect(
        (await t.call("POST", "/v1/workflows", { name: "Strict", version: "1.0.0", input_schema: needs("b") })).status,
      ).toBe(201);
      const r = await t.call("POST", "/v1/schedules", {
        schedule_id: "s1",
        workflow: "Strict",
        interval: "1m",
        input: { a: "x" },
      });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/^input does not match Strict@1\.0\.0/);
    },
  );
});
