/**
 * The reads the web UI is built on (docs/api.md § Listing and searching schedules, § Conditional
 * reads, § Identity and preview): search, filters, sort and cursor paging over schedules, the
 * executions' time range, 304 for an unchanged list, the timing preview and /v1/me. On SQLite,
 * and on PostgreSQL when ORBIT_TEST_DATABASE_URL is set.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

if (!PG_URL) console.warn("skipped: test/api/ui-lists.test.ts on PostgreSQL: ORBIT_TEST_DATABASE_URL is not set");

const dialects = [
  { name: "sqlite", enabled: true },
  { name: "postgres", enabled: PG_URL !== undefined },
];

describe.each(dialects)("UI list reads on $name", ({ name, enabled }) => {
  let t: TestServer;
  const schema = `orbit_ui_${randomBytes(5).toString("hex")}`;
  const ids: string[] = [];

  beforeAll(async () => {
    if (!enabled) return;
    if (name === "postgres") {
      await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({ database: PG_URL as string, databaseSchema: schema });
    } else t = await startTestServer();
    for (const w of ["Billing", "Reports", "Adhoc"])
      await t.call("POST", "/v1/workflows", { name: w, version: "1.0.0" });
    // 25 schedules: three hourly report crons with descriptions, the rest billing intervals.
    for (let i = 0; i < 25; i++) {
      const id = `s-${String(i).padStart(2, "0")}`;
      ids.push(id);
      const body =
        i < 3
          ? { schedule_id: id, workflow: "Reports", cron: `${i} * * * *`, description: `Quarterly ledger ${i}` }
          : { schedule_id: id, workflow: "Billing", interval: `${i + 1}m` };
      const r = await t.call("POST", "/v1/schedules", body);
      expect(r.status).toBe(201);
    }
    await t.call("POST", "/v1/schedules/s-05/pause", { note: "maintenance" });
  });
  afterAll(async () => {
    if (!enabled) return;
    await t.stop();
    if (name === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it.skipIf(!enabled)("searches id, workflow and description, case-insensitively, with a total", async () => {
    const byDescription = await t.call("GET", "/v1/schedules?q=LEDGER");
    expect(byDescription.status).toBe(200);
    expect(byDescription.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual([
      "s-00",
      "s-01",
      "s-02",
    ]);
    expect(byDescription.body.total).toBe(3);
    const byId = await t.call("GET", "/v1/schedules?q=s-1");
    expect(byId.body.total).toBe(10);
    const byWorkflow = await t.call("GET", "/v1/schedules?q=billing&state=paused");
    expect(byWorkflow.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual(["s-05"]);
    // counts are before the state filter: what the UI shows beside each state.
    expect(byWorkflow.body.counts).toEqual({ active: 21, paused: 1, ended: 0 });
    const none = await t.call("GET", "/v1/schedules?q=nothing-like-this");
    expect(none.body).toMatchObject({ schedules: [], next_cursor: null, total: 0 });
  });

  it.skipIf(!enabled)("searches beyond ASCII case-insensitively on both databases", async () => {
    // SQLite's LOWER folds only ASCII: `Über` typed exactly found nothing there (a tester).
    const body = {
      schedule_id: "s-umlaut",
      workflow: "Reports",
      cron: "0 1 * * *",
      description: "Über-Bericht ПРИВЕТ",
    };
    expect((await t.call("POST", "/v1/schedules", body)).status).toBe(201);
    try {
      for (const q of ["Über", "über", "ÜBER-bericht", "привет", "ПРИВЕТ"]) {
        const r = await t.call("GET", `/v1/schedules?q=${encodeURIComponent(q)}`);
        expect([q, r.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)]).toEqual([q, ["s-umlaut"]]);
      }
    } finally {
      await t.call("DELETE", "/v1/schedules/s-umlaut");
    }
  });

  it.skipIf(!enabled)("pages a sorted search with cursors: every row once, in order", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
      const r = await t.call("GET", `/v1/schedules?sort=workflow&order=desc&limit=7${q}`);
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(25);
      seen.push(...r.body.schedules.map((s: { schedule_id: string }) => s.schedule_id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(4);
    // Reports sort after Billing: descending puts them first; ties by id ascending.
    expect(seen).toEqual([...ids.slice(0, 3), ...ids.slice(3)]);

    // A cursor names a position in its own list: another sort or order refuses it (it was read as a
    // position of that list, giving a wrong or empty page).
    const first = await t.call("GET", "/v1/schedules?sort=workflow&limit=1");
    for (const other of ["sort=updated", "sort=workflow&order=desc", "sort=next_fire"]) {
      const r = await t.call("GET", `/v1/schedules?${other}&limit=2&cursor=${first.body.next_cursor}`);
      expect({ other, status: r.status, code: r.body.code }).toEqual({ other, status: 400, code: "INVALID_ARGUMENT" });
    }

    const next = await t.call("GET", "/v1/schedules?sort=next_fire&limit=3");
    const times = next.body.schedules.map((s: { next_fire_at: string }) => s.next_fire_at);
    expect(times).toEqual([...times].sort());
    // The paused one has no next fire: it sorts last in either order.
    const last = await t.call("GET", "/v1/schedules?sort=next_fire&order=desc&limit=1000");
    expect(last.body.schedules.at(-1).schedule_id).toBe("s-05");
  });

  it.skipIf(!enabled)("filters by last outcome: before any execution ended, none matches every page", async () => {
    expect((await t.call("GET", "/v1/schedules?outcome=failed")).body.total).toBe(0);
    for (const sort of ["id", "next_fire", "workflow"]) {
      const pages = async (extra: string) => {
        const out: string[][] = [];
        let cursor: string | null = null;
        do {
          const c: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
          const r = await t.call("GET", `/v1/schedules?sort=${sort}&order=desc&limit=6&q=s-${extra}${c}`);
          expect(r.status).toBe(200);
          out.push(r.body.schedules.map((s: { schedule_id: string }) => s.schedule_id));
          cursor = r.body.next_cursor;
        } while (cursor !== null);
        return out;
      };
      expect(await pages("&outcome=none")).toEqual(await pages(""));
    }
  });

  it.skipIf(!enabled)("refuses a bad cursor, sort or outcome with a 400 naming it", async () => {
    const cursor = await t.call("GET", "/v1/schedules?sort=id&cursor=bogus");
    expect(cursor.status).toBe(400);
    expect(cursor.body.message).toMatch(/cursor/);
    // A NUL inside a well-formed cursor: PostgreSQL refused it with a 500 (a tester's fuzzing).
    const nul = (v: unknown[]) => Buffer.from(JSON.stringify(v), "utf8").toString("base64url");
    for (const path of [
      `/v1/executions?cursor=${nul([1, "\u0000"])}`,
      `/v1/schedules?sort=next_fire&cursor=${nul(["next_fire", "asc", 1, "\u0000"])}`,
      `/v1/schedules?sort=workflow&cursor=${nul(["workflow", "asc", "W\u0000", "a"])}`,
    ]) {
      const r = await t.call("GET", path);
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 400, code: "INVALID_ARGUMENT" });
    }
    const sort = await t.call("GET", "/v1/schedules?sort=colour");
    expect(sort.status).toBe(400);
    expect(sort.body.message).toMatch(/sort/);
    const outcome = await t.call("GET", "/v1/schedules?outcome=maybe");
    expect(outcome.status).toBe(400);
    // The status every view shows points at the filter's word for it.
    const completed = await t.call("GET", "/v1/schedules?outcome=COMPLETED");
    expect(completed.status).toBe(400);
    expect(completed.body.message).toBe(
      'query parameter outcome must be one of succeeded, failed, cancelled, none, not_starting; did you mean "succeeded"?',
    );
  });

  it.skipIf(!enabled)("finds the schedules whose occurrences cannot start, which no run failed", async () => {
    const ghost = { schedule_id: "s-ghost", workflow: "Ghost", interval: "1m" };
    const applied = await t.call("POST", "/v1/schedules/apply", { schedules: [ghost], allow_unregistered: true });
    expect(applied.status).toBe(200);
    try {
      const ids = async (query: string) =>
        (await t.call("GET", `/v1/schedules?${query}`)).body.schedules.map(
          (s: { schedule_id: string }) => s.schedule_id,
        );
      expect(await ids("outcome=not_starting")).toEqual(["s-ghost"]);
      expect(await ids("outcome=failed")).toEqual([]);
      // With the other filters and a sort, as the web UI sends it.
      expect(await ids("outcome=not_starting&q=ghost&sort=failures&order=desc")).toEqual(["s-ghost"]);
      expect(await ids("outcome=not_starting&workflow=Billing")).toEqual([]);
    } finally {
      expect((await t.call("DELETE", "/v1/schedules/s-ghost")).status).toBe(204);
    }
  });

  it.skipIf(!enabled)("filters overdue schedules: active ones whose fire is over a minute late", async () => {
    // The scheduler is running and fires on time: nothing is overdue.
    expect((await t.call("GET", "/v1/schedules?overdue=true")).body.total).toBe(0);
  });

  it.skipIf(!enabled)("answers 304 with no body when the list has not changed, 200 when it has", async () => {
    const first = await t.call("GET", "/v1/schedules?sort=id&limit=50");
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^W\/"/);
    const again = await t.call("GET", "/v1/schedules?sort=id&limit=50", undefined, { "if-none-match": etag as string });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    await t.call("PATCH", "/v1/schedules/s-07", { description: "changed" });
    const changed = await t.call("GET", "/v1/schedules?sort=id&limit=50", undefined, {
      "if-none-match": etag as string,
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
  });

  it.skipIf(!enabled)("lists executions in a creation time range", async () => {
    await t.call("POST", "/v1/executions", { execution_id: "early", workflow: "Adhoc" });
    t.clock.advance(60_000);
    const middle = new Date(t.clock.now()).toISOString();
    await t.call("POST", "/v1/executions", { execution_id: "late", workflow: "Adhoc" });
    const after = await t.call("GET", `/v1/executions?created_after=${middle}&workflow=Adhoc`);
    expect(after.body.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual(["late"]);
    const before = await t.call("GET", `/v1/executions?created_before=${middle}&workflow=Adhoc`);
    expect(before.body.executions.map((e: { execution_id: string }) => e.execution_id)).toContain("early");
    expect(before.body.executions.map((e: { execution_id: string }) => e.execution_id)).not.toContain("late");
    const bad = await t.call("GET", "/v1/executions?created_after=yesterday");
    expect(bad.status).toBe(400);
  });

  it.skipIf(!enabled)("previews a timing in English with its next fires, storing nothing", async () => {
    const r = await t.call("GET", "/v1/preview?cron=30%209%20*%20*%20*&timezone=Asia/Kolkata&count=2");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      description: expect.stringMatching(/09:30/),
      timezone: "Asia/Kolkata",
      next_fire_times: ["2026-11-16T04:00:00Z", "2026-11-17T04:00:00Z"],
    });
    // An interval has no zone, as a schedule with one shows `timezone: null`.
    const interval = await t.call("GET", "/v1/preview?interval=15m&count=1&from=2026-11-16T04:07:00Z");
    expect(interval.body).toEqual({
      description: expect.stringMatching(/15 minutes/),
      timezone: null,
      next_fire_times: ["2026-11-16T04:15:00Z"],
    });
    const bad = await t.call("GET", "/v1/preview?cron=0%2025%20*%20*%20*");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_SCHEDULE");
    expect((await t.call("GET", "/v1/me")).body).toEqual({
      name: null,
      kind: "client",
      allow: [{ workflows: ["*"], actions: ["schedule", "start", "read", "cancel"] }],
    });
  });
});
