/** /v1/schedules over HTTP on a real server: the seed's example, CRUD, fences, actions, errors. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ORDER_INPUT, SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

const SEED_ORDER = [
  "schedule_id",
  "workflow",
  "input",
  "interval",
  "overlap",
  "catchup",
  "paused",
  "next_fire_at",
  "next_fire_times",
  "last_fire_at",
  "last_execution_id",
  "fired",
  "skipped",
  "last_error",
  "created_at",
  "updated_at",
];

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
  await t.registerOrders();
});
afterEach(async () => {
  await t.stop();
});

describe("POST /v1/schedules", () => {
  it("answers the seed's curl example field for field, in the seed's order", async () => {
    // The seed's curl body, byte for byte (its `120.0` must come back as written).
    const r = await t.call(
      "POST",
      "/v1/schedules",
      '{"schedule_id": "orders-every-10s", "workflow": "OrderProcessing", "interval": "10s", "input": {"order_id": "R-1", "customer_id": "cust-1", "amount": 120.0, "items": [{"sku": "BOOK-1", "quantity": 1}]}}',
    );
    expect(r.status).toBe(201);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    const keys = Object.keys(r.body);
    expect(keys.slice(0, SEED_ORDER.length)).toEqual(SEED_ORDER);
    expect(keys.slice(SEED_ORDER.length)).toEqual([
      "state",
      "revision",
      "last_outcome",
      "last_success_at",
      "last_failure_at",
      "consecutive_failures",
      "failures",
      "last_tick",
      "dead_letters",
      "buffered",
    ]);
    // The seed's line, to the character.
    expect(r.text).toContain(
      '{"schedule_id":"orders-every-10s","workflow":"OrderProcessing","input":{"order_id":"R-1","customer_id":"cust-1","amount":120.0,"items":[{"sku":"BOOK-1","quantity":1}]},"interval":"10s","overlap":"skip","catchup":"skip_missed","paused":false,"next_fire_at":"2026-11-15T18:51:10Z","next_fire_times":["2026-11-15T18:51:10Z","2026-11-15T18:51:20Z","2026-11-15T18:51:30Z","2026-11-15T18:51:40Z","2026-11-15T18:51:50Z"],"last_fire_at":null,"last_execution_id":null,"fired":0,"skipped":0,"last_error":null,"created_at":"2026-11-15T18:51:00.347Z","updated_at":"2026-11-15T18:51:00.347Z"',
    );
    expect(r.body).toMatchObject({ state: "active", revision: 1, last_tick: null, dead_letters: [] });
  });

  it("refuses an invalid cron with the seed's message (400 INVALID_SCHEDULE)", async () => {
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, interval: undefined, cron: "0 25 * * *" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: "INVALID_SCHEDULE",
      message: "cron `0 25 * * *`: `25` is out of range for the hour field (0-23)",
    });
  });

  it("refuses an unknown setting naming the closest one, and stores nothing", async () => {
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, misfire_polcy: "skip" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: "INVALID_ARGUMENT",
      message: 'unknown setting "misfire_polcy"; did you mean "catchup"?',
    });
    const list = await t.call("GET", "/v1/schedules");
    expect(list.body).toEqual({ schedules: [], next_cursor: null });
  });

  it("refuses a setting of the wrong type naming it", async () => {
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, paused: "yes" });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("paused must be a boolean or null");
  });

  it("refuses a pause_note on a schedule created active, and stores nothing; takes it with paused: true", async () => {
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, pause_note: "hello" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: "INVALID_ARGUMENT",
      message: "pause_note is why a schedule is paused: give it with paused: true, or leave it out",
    });
    expect((await t.call("GET", "/v1/schedules/orders-every-10s")).status).toBe(404);
    const paused = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, paused: true, pause_note: "hello" });
    expect(paused.body).toMatchObject({ paused: true, pause_note: "hello", state: "paused" });
  });

  it("answers 409 ALREADY_EXISTS for an existing id", async () => {
    expect((await t.call("POST", "/v1/schedules", SEED_SCHEDULE)).status).toBe(201);
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, interval: "1m" });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ code: "ALREADY_EXISTS", message: "schedule orders-every-10s already exists" });
    expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.interval).toBe("10s");
  });

  it("answers 404 for an unregistered workflow", async () => {
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, workflow: "Nope" });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("NOT_FOUND");
  });
});

describe("reading and listing", () => {
  it("reads a schedule with its ETag, and 404 for an unknown one", async () => {
    await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
    const r = await t.call("GET", "/v1/schedules/orders-every-10s");
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.body.schedule_id).toBe("orders-every-10s");
    const missing = await t.call("GET", "/v1/schedules/nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: "NOT_FOUND", message: "schedule nope does not exist" });
  });

  it("pages by id with a cursor, and filters by workflow and state", async () => {
    for (const id of ["c", "a", "b"]) await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: id });
    await t.call("POST", "/v1/schedules/b/pause");
    const first = await t.call("GET", "/v1/schedules?limit=2");
    expect(first.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual(["a", "b"]);
    expect(first.body.next_cursor).toBe("b");
    const second = await t.call("GET", `/v1/schedules?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toMatchObject({ next_cursor: null });
    expect(second.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual(["c"]);
    // A cursor no id can be, or a search's cursor, is refused: both were a 200 (empty, or the first
    // page again from wherever the search cursor's base64 fell; a tester's fuzz).
    for (const junk of ["", "a%20b", "x".repeat(101)]) {
      const r = await t.call("GET", `/v1/schedules?cursor=${junk}`);
      expect([junk, r.status, r.body.message]).toEqual([
        junk,
        400,
        expect.stringMatching(/^cursor ".*" is not one this list issued \(a schedule id\); omit it/),
      ]);
    }
    // Ids whose base64 reads as JSON ("W10" is "[]") are ids: the list's own cursor was refused (a tester).
    // And ids that read as a search's cursor did ("WyJ4IiwiYXNjIiwwLDBd" is base64 of ["x","asc",0,0]).
    const nasty = ["W10", "W10-a", "WzFd", "WyJ4IiwiYXNjIiwwLDBd", "WyJ4IiwiYXNjIiwwLDBd.x"];
    for (const id of nasty) await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: id });
    for (const id of nasty)
      expect([id, (await t.call("GET", `/v1/schedules?limit=1&cursor=${id}`)).status]).toEqual([id, 200]);
    const byId = await t.call("GET", "/v1/schedules?limit=1&cursor=W10");
    expect([byId.status, byId.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)]).toEqual([
      200,
      ["W10-a"],
    ]);
    for (const id of nasty) await t.call("DELETE", `/v1/schedules/${id}`);
    const search = await t.call("GET", "/v1/schedules?sort=next_fire&limit=1");
    const mixed = await t.call("GET", `/v1/schedules?cursor=${search.body.next_cursor}`);
    expect([mixed.status, mixed.body.message]).toEqual([
      400,
      "cursor is a search's next_cursor: give it with the search's parameters (q, outcome, overdue, sort, order)",
    ]);
    const paused = await t.call("GET", "/v1/schedules?state=paused");
    expect(paused.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual(["b"]);
    expect((await t.call("GET", "/v1/schedules?workflow=Other")).body.schedules).toEqual([]);
    expect((await t.call("GET", "/v1/schedules?state=gone")).body).toEqual({
      code: "INVALID_ARGUMENT",
      message: "query parameter state must be one of active, paused, ended",
    });
    // A setting's null (unset, on an update) is not offered as one of its values.
    const queue = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "q", overlap: "queue" });
    expect(queue.body).toEqual({
      code: "INVALID_ARGUMENT",
      message: "overlap must be one of skip, allow, cancel_previous, buffer_one, buffer_all",
    });
    expect((await t.call("GET", "/v1/schedules?limit=0")).body.message).toBe(
      "query parameter limit must be at least 1",
    );
    expect((await t.call("GET", "/v1/schedules?colour=red")).body.message).toMatch(
      /^unknown field "colour" in the query string/,
    );
  });
});

describe("changes with fences", () => {
  beforeEach(async () => {
    await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
  });

  it("PATCH recomputes timing, moves the revision and unsets with null", async () => {
    t.clock.advance(1000);
    const r = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: "1m", description: "every minute" });
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBe('"2"');
    expect(r.body).toMatchObject({
      interval: "1m",
      description: "every minute",
      next_fire_at: "2026-11-15T18:52:00Z",
      revision: 2,
    });
    const unset = await t.call("PATCH", "/v1/schedules/orders-every-10s", { description: null });
    expect(unset.body.description).toBeUndefined();
    const bad = await t.call("PATCH", "/v1/schedules/orders-every-10s", { schedule_id: "other" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/schedule_id/);
    // Unsetting the timing alone says how to change it; giving the other switches.
    const untimed = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: null });
    expect(untimed.body).toEqual({
      code: "INVALID_SCHEDULE",
      message: "interval cannot be unset on its own: a schedule needs a cron or an interval; give cron to switch to it",
    });
    const switched = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: null, cron: "*/5 * * * *" });
    expect({ status: switched.status, cron: switched.body.cron, interval: switched.body.interval }).toEqual({
      status: 200,
      cron: "*/5 * * * *",
      interval: undefined,
    });
  });

  it("If-Match on a stale revision is 412 and changes nothing", async () => {
    const r = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: "1m" }, { "if-match": '"7"' });
    expect(r.status).toBe(412);
    expect(r.body).toEqual({
      code: "PRECONDITION_FAILED",
      message: "schedule orders-every-10s is at revision 1, not 7 (If-Match); read it again",
    });
    // If-Match compares strongly (RFC 9110 § 13.1.1): a weak tag never matches (it was taken as "1").
    const weak = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: "1m" }, { "if-match": 'W/"1"' });
    expect({ status: weak.status, code: weak.body.code }).toEqual({ status: 412, code: "PRECONDITION_FAILED" });
    expect(weak.body.message).toContain('If-Match W/"1" is a weak entity tag, which never matches');
    // A tag that is no revision is quoted as given (it was JSON-quoted: `If-Match "\"x1\""`).
    const bad = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: "1m" }, { "if-match": '"x1"' });
    expect([bad.status, bad.body.message]).toEqual([400, 'If-Match "x1" is not a schedule revision such as "3"']);
    // A list matches when any of its tags does (it was 400 "not a schedule revision").
    const stale = await t.call(
      "PATCH",
      "/v1/schedules/orders-every-10s",
      { interval: "1m" },
      { "if-match": '"5", "7"' },
    );
    expect(stale.body.message).toBe("schedule orders-every-10s is at revision 1, not 5 or 7 (If-Match); read it again");
    expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.revision).toBe(1);
    const ok = await t.call("PATCH", "/v1/schedules/orders-every-10s", { interval: "1m" }, { "if-match": '"7", "1",' });
    expect(ok.status).toBe(200);
    expect(
      (await t.call("POST", "/v1/schedules/orders-every-10s/pause", {}, { "if-match": "nonsense" })).body.code,
    ).toBe("INVALID_ARGUMENT");
  });

  it("If-Match on a create is 412 and creates nothing (a new schedule has no revision to match)", async () => {
    const body = { ...SEED_SCHEDULE, schedule_id: "fenced-create" };
    for (const header of ['"1"', "*"]) {
      const r = await t.call("POST", "/v1/schedules", body, { "if-match": header });
      expect(r.status).toBe(412);
      expect(r.body.code).toBe("PRECONDITION_FAILED");
      expect(r.body.message).toBe(
        `schedule fenced-create is created by this request, so it has no revision to match (If-Match: ${header}); create it without If-Match, or send If-Match with PATCH /v1/schedules/{id} to change a schedule that exists`,
      );
      expect((await t.call("GET", "/v1/schedules/fenced-create")).status).toBe(404);
    }
    expect((await t.call("POST", "/v1/schedules", body, { "if-match": "nonsense" })).body.code).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await t.call("POST", "/v1/schedules", body)).status).toBe(201);
  });

  it("If-Match on a write without a revision (an execution's start, cancel, retry), or * on a create, is 412 and does nothing", async () => {
    await t.ok("POST", "/v1/executions", { execution_id: "plain", workflow: "OrderProcessing", input: ORDER_INPUT });
    const start = { execution_id: "fenced", workflow: "OrderProcessing", input: ORDER_INPUT };
    const creates = "creates what it names, so there is nothing to match";
    for (const [path, body, header, why] of [
      ["/v1/executions", start, '"1"', creates],
      // `*` asks that the target exists: what a create names does not yet (it was created).
      ["/v1/executions", start, "*", creates],
      ["/v1/workflows", { name: "Fenced", version: "1.0.0" }, "*", creates],
      ["/v1/executions/plain/cancel", { reason: "x" }, "garbage", "has no revision to match"],
    ] as const) {
      const r = await t.call("POST", path, body, { "if-match": header });
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 412,
        body: {
          code: "PRECONDITION_FAILED",
          message: `POST ${path.replace("plain", "{id}")} ${why} (If-Match: ${header}); send it without If-Match`,
        },
      });
    }
    expect((await t.call("GET", "/v1/executions/fenced")).status).toBe(404);
    expect((await t.call("GET", "/v1/workflows/Fenced")).status).toBe(404);
    expect((await t.ok("GET", "/v1/executions/plain")).status).toBe("RUNNING");
    // `*` asks only that the execution exists.
    expect((await t.call("POST", "/v1/executions/plain/cancel", { reason: "x" }, { "if-match": "*" })).status).toBe(
      200,
    );
  });

  it("?expected_revision on a stale revision is 409 CONFLICT", async () => {
    const r = await t.call("POST", "/v1/schedules/orders-every-10s/pause?expected_revision=5", { note: "x" });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("CONFLICT");
    expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.paused).toBe(false);
    const ok = await t.call("POST", "/v1/schedules/orders-every-10s/pause?expected_revision=1", {
      note: "maintenance",
    });
    expect(ok.body).toMatchObject({ paused: true, pause_note: "maintenance", state: "paused", revision: 2 });
    // No revision is that large: 400 naming the parameter, not a 409 "not the expected 1e+23".
    const huge = await t.call(
      "POST",
      "/v1/schedules/orders-every-10s/resume?expected_revision=99999999999999999999999",
    );
    expect(huge.status).toBe(400);
    expect(huge.body.code).toBe("INVALID_ARGUMENT");
    expect(huge.body.message).toContain("expected_revision");
    expect(huge.body.message).not.toContain("e+23");
  });

  it("DELETE answers 204 without a body, then 404", async () => {
    expect((await t.call("DELETE", "/v1/schedules/orders-every-10s", undefined, { "if-match": '"9"' })).status).toBe(
      412,
    );
    const r = await t.call("DELETE", "/v1/schedules/orders-every-10s");
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await t.call("DELETE", "/v1/schedules/orders-every-10s")).status).toBe(404);
  });

  it("pause, resume and a refused pause body", async () => {
    const bad = await t.call("POST", "/v1/schedules/orders-every-10s/pause", { nte: "typo" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('unknown field "nte" in the request body; did you mean "note"? (known: note)');
    expect((await t.call("POST", "/v1/schedules/orders-every-10s/pause")).body.state).toBe("paused");
    const resumed = await t.call("POST", "/v1/schedules/orders-every-10s/resume", { catch_up: false });
    expect(resumed.body).toMatchObject({ paused: false, state: "active", revision: 3 });
    expect((await t.call("POST", "/v1/schedules/orders-every-10s/resume", { catch_up: "yes" })).body.message).toBe(
      "catch_up must be a boolean",
    );
  });
});

describe("trigger, backfill, occurrences and firing", () => {
  beforeEach(async () => {
    await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
  });

  it("trigger starts (201), then overlap skip refuses (200 started: false)", async () => {
    const first = await t.call("POST", "/v1/schedules/orders-every-10s/trigger", {});
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      started: true,
      execution_id: "orders-every-10s:manual:2026-11-15T18:51:00.347Z",
      overlap: "skip",
    });
    const second = await t.call("POST", "/v1/schedules/orders-every-10s/trigger");
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      started: false,
      execution_id: null,
      message: "not started: the previous execution of orders-every-10s is still running (overlap: skip)",
      overlap: "skip",
    });
    const exec = await t.call("GET", `/v1/executions/${encodeURIComponent(first.body.execution_id)}`);
    expect(exec.body).toMatchObject({ schedule_id: "orders-every-10s", status: "RUNNING" });
    expect(exec.body.trigger.type).toBe("manual");
    // Starting an id that exists is a no-op returning it, an occurrence's id too (it was refused).
    const again = await t.call("POST", "/v1/executions", {
      execution_id: first.body.execution_id,
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
    });
    expect({ status: again.status, id: again.body.execution_id }).toEqual({ status: 200, id: first.body.execution_id });
  });

  it("backfill starts past occurrences once; occurrences page newest first", async () => {
    const body = { start_at: "2026-11-15T18:00:00Z", end_at: "2026-11-15T18:00:30Z" };
    const r = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", body);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...body, occurrences: 4, started: 4, already_existed: 0 });
    const again = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", body);
    expect(again.body).toMatchObject({ started: 0, already_existed: 4 });
    const page = await t.call("GET", "/v1/schedules/orders-every-10s/occurrences?limit=3");
    expect(page.body.occurrences).toHaveLength(3);
    expect(page.body.occurrences[0]).toMatchObject({ kind: "started", occurrence: "2026-11-15T18:00:30Z" });
    const rest = await t.call("GET", `/v1/schedules/orders-every-10s/occurrences?cursor=${page.body.next_cursor}`);
    expect(rest.body).toMatchObject({ next_cursor: null });
    expect(rest.body.occurrences.map((o: { occurrence: string }) => o.occurrence)).toEqual(["2026-11-15T18:00:00Z"]);
    // A cursor this server did not issue is refused, not read as the end of the ledger.
    for (const junk of ["0x10", "-1", "%20", "1e3", "0", "abc"]) {
      const r = await t.call("GET", `/v1/schedules/orders-every-10s/occurrences?cursor=${junk}`);
      expect({ junk, status: r.status, message: r.body.message }).toEqual({
        junk,
        status: 400,
        message: expect.stringMatching(/^cursor ".*" is not one this server issued/),
      });
    }
    expect((await t.call("POST", "/v1/schedules/orders-every-10s/backfill", { start_at: "x" })).body.message).toBe(
      'the request body needs "end_at"',
    );
    // A misspelt required key is named as the unknown key it is, not as the missing one.
    const misspelt = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", {
      start: "2026-11-15T17:00:00Z",
      end_at: "2026-11-15T17:00:10Z",
    });
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.message).toBe('unknown field "start" in the request body (known: start_at, end_at)');
    // A write like the others: If-Match and expected_revision fence it (they were ignored).
    const revision = (await t.call("GET", "/v1/schedules/orders-every-10s")).body.revision as number;
    const range = { start_at: "2026-11-15T17:00:00Z", end_at: "2026-11-15T17:00:10Z" };
    const stale = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", range, {
      "if-match": `"${revision - 1}"`,
    });
    expect({ status: stale.status, code: stale.body.code }).toEqual({ status: 412, code: "PRECONDITION_FAILED" });
    const expected = await t.call(
      "POST",
      `/v1/schedules/orders-every-10s/backfill?expected_revision=${revision + 5}`,
      range,
    );
    expect({ status: expected.status, code: expected.body.code }).toEqual({ status: 409, code: "CONFLICT" });
    expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.revision).toBe(revision);
    const fenced = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", range, {
      "if-match": `"${revision}"`,
    });
    expect(fenced.body).toMatchObject({ started: 2 });
  });

  it("backfill refuses a range reaching an occurrence still to come, and starts nothing", async () => {
    // Now is 18:51:00.347Z; the next occurrence is 18:51:10Z.
    const r = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", {
      start_at: "2026-11-15T18:50:00Z",
      end_at: "2026-11-15T18:52:00Z",
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: "INVALID_ARGUMENT",
      message:
        "backfill starts past occurrences only: 2026-11-15T18:51:10Z is still to come; end the range before it (trigger starts one now)",
    });
    expect((await t.call("GET", "/v1/executions?schedule_id=orders-every-10s")).body.executions).toEqual([]);
    // An end_at after now with no occurrence between now and it is fine: 18:50:00 … 18:51:00.
    const ok = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", {
      start_at: "2026-11-15T18:50:00Z",
      end_at: "2026-11-15T18:51:05Z",
    });
    expect(ok.body).toMatchObject({ occurrences: 7, started: 7 });
  });

  it("a schedule deleted and created again under its id starts with an empty ledger", async () => {
    await t.call("POST", "/v1/schedules/orders-every-10s/trigger", {});
    expect((await t.call("GET", "/v1/schedules/orders-every-10s/occurrences")).body.occurrences).toHaveLength(1);
    expect((await t.call("DELETE", "/v1/schedules/orders-every-10s")).status).toBe(204);
    expect((await t.call("POST", "/v1/schedules", SEED_SCHEDULE)).status).toBe(201);
    const again = await t.call("GET", "/v1/schedules/orders-every-10s");
    expect(again.body).toMatchObject({ last_tick: null, dead_letters: [], fired: 0 });
    expect((await t.call("GET", "/v1/schedules/orders-every-10s/occurrences")).body.occurrences).toEqual([]);
    // The execution the deleted schedule started is kept.
    expect((await t.call("GET", "/v1/executions?schedule_id=orders-every-10s")).body.executions).toHaveLength(1);
  });

  it("the loop fires when the clock reaches the occurrence", async () => {
    t.clock.set(Date.parse("2026-11-15T18:51:10Z"));
    const s = await t.until(
      async () => (await t.call("GET", "/v1/schedules/orders-every-10s")).body,
      (b) => b.fired === 1,
      "the first fire",
    );
    expect(s).toMatchObject({
      last_execution_id: "orders-every-10s:2026-11-15T18:51:10Z",
      next_fire_at: "2026-11-15T18:51:20Z",
      last_tick: { kind: "started", occurrence: "2026-11-15T18:51:10Z" },
    });
    const execs = await t.call("GET", "/v1/executions?schedule_id=orders-every-10s");
    expect(execs.body.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual([
      "orders-every-10s:2026-11-15T18:51:10Z",
    ]);
  });
});
