/**
 * A pause of a paused schedule (no note, or the note it has) and a resume of one not paused (with
 * or without catch_up) change nothing: 200 with the schedule as it is, its revision and updated_at
 * unmoved, so other clients' If-Match fences hold (docs/api.md § Revisions; they moved 1→2→3→4→5
 * over pause, pause, resume, resume). On SQLite, and on PostgreSQL when ORBIT_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL } from "../helpers/db.js";
import { startDialectServer, type TestServer } from "./helpers.js";

for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`a pause or resume that changes nothing (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startDialectServer(dialect, "orbit_noop_pause");
      await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
    });
    afterAll(async () => {
      await t?.stop();
    });

    /** Each step a second after the one before: an updated_at that moves shows it. */
    const step = async (path: string, body?: unknown, headers?: Record<string, string>) => {
      t.clock.advance(1000);
      const r = await t.call("POST", path, body, headers);
      expect([path, body, r.status, r.body.message]).toEqual([path, body, 200, undefined]);
      return r.body;
    };

    it("keeps revision and updated_at over pause, pause, resume, resume", async () => {
      const created = await t.ok("POST", "/v1/schedules", { schedule_id: "p", workflow: "W", cron: "0 3 * * *" });
      const paused = await step("/v1/schedules/p/pause");
      expect(paused.revision).toBe(created.revision + 1);
      // Fenced with the revision the first pause answered: the repeat passes and moves nothing.
      const again = await step("/v1/schedules/p/pause", undefined, { "if-match": `"${paused.revision}"` });
      expect(again).toEqual(paused);
      const resumed = await step("/v1/schedules/p/resume");
      expect(resumed.revision).toBe(paused.revision + 1);
      expect(resumed.paused).toBe(false);
      for (const body of [undefined, {}, { catch_up: true }, { catch_up: false }]) {
        expect(await step("/v1/schedules/p/resume", body)).toEqual(resumed);
      }
      const read = await t.ok("GET", "/v1/schedules/p");
      expect([read.revision, read.updated_at]).toEqual([resumed.revision, resumed.updated_at]);
    });

    it("keeps a note given again, and writes a different one", async () => {
      await t.ok("POST", "/v1/schedules", { schedule_id: "n", workflow: "W", cron: "0 3 * * *" });
      const paused = await step("/v1/schedules/n/pause", { note: "maintenance" });
      expect(paused.pause_note).toBe("maintenance");
      expect(await step("/v1/schedules/n/pause", { note: "maintenance" })).toEqual(paused);
      expect(await step("/v1/schedules/n/pause", {})).toEqual(paused);
      const renoted = await step("/v1/schedules/n/pause", { note: "migration" });
      expect([renoted.pause_note, renoted.revision]).toEqual(["migration", paused.revision + 1]);
      expect(renoted.updated_at).not.toBe(paused.updated_at);
    });
  });
}
