/**
 * Timings that would silently mean something else are refused (issue 11, item 10; docs/design.md §
 * Cron, § Time zones and DST): a cron step larger than its field (`*\/99999999999999999999` used to
 * read as "every hour") and a UTC offset outside RFC 3339's ±23:59 (`+25:00` used to shift by 25
 * hours). Every route that takes a timing or an instant answers 400 with the cause and stores nothing.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { ORDER_INPUT, SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
  await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
});
afterAll(() => t.stop());

const base = { workflow: "OrderProcessing", input: ORDER_INPUT };

it("refuses a cron step larger than its field's number of values, naming the field and the largest step", async () => {
  const cases: [string, string][] = [
    ["*/99999999999999999999 * * * *", "larger than the minute field (at most 60, its number of values)"],
    ["0 */99999999999999999999 * * *", "larger than the hour field (at most 24, its number of values)"],
    ["*/61 * * * *", "larger than the minute field (at most 60"],
    ["1/9007199254740993 * * * *", "larger than the minute field (at most 60"],
    ["0 0 */32 * *", "larger than the day of month field (at most 31"],
    ["0 0 1 */13 *", "larger than the month field (at most 12"],
    ["0 0 * * */8", "larger than the day of week field (at most 7"],
    ["*/61 * * * * *", "larger than the second field (at most 60"],
  ];
  for (const [cron, says] of cases) {
    const r = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "bad", cron });
    expect({ cron, status: r.status, code: r.body.code }).toEqual({ cron, status: 400, code: "INVALID_SCHEDULE" });
    expect(r.body.message).toContain(says);
    const patch = await t.call("PATCH", "/v1/schedules/orders-every-10s", { cron, interval: null });
    expect({ cron, status: patch.status }).toEqual({ cron, status: 400 });
    const preview = await t.call("GET", `/v1/preview?cron=${encodeURIComponent(cron)}`);
    expect({ cron, status: preview.status, code: preview.body.code }).toEqual({
      cron,
      status: 400,
      code: "INVALID_SCHEDULE",
    });
  }
  // The largest steps are fine: every 60 minutes is hourly, every 12 months yearly.
  for (const cron of ["*/60 * * * *", "0 */24 * * *", "0 0 */31 * *", "0 0 1 */12 *", "0 0 * * */7"]) {
    expect((await t.call("GET", `/v1/preview?cron=${encodeURIComponent(cron)}`)).status).toBe(200);
  }
  const list = await t.call("GET", "/v1/schedules");
  expect(list.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual(["orders-every-10s"]);
  expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.interval).toBe("10s");
});

it("refuses a UTC offset beyond ±23:59 in every instant it reads", async () => {
  for (const offset of ["+25:00", "-25:00", "+24:00", "+23:60", "+99:99"]) {
    const at = `2026-12-01T00:00:00${offset}`;
    const create = await t.call("POST", "/v1/schedules", {
      ...base,
      schedule_id: "bad",
      cron: "0 * * * *",
      start_at: at,
    });
    expect({ offset, status: create.status, body: create.body }).toEqual({
      offset,
      status: 400,
      body: {
        code: "INVALID_ARGUMENT",
        message: `start_at "${at}" has an invalid UTC offset ${offset} (from -23:59 to +23:59)`,
      },
    });
    const end = await t.call("PATCH", "/v1/schedules/orders-every-10s", { end_at: at });
    expect({ offset, status: end.status, code: end.body.code }).toEqual({
      offset,
      status: 400,
      code: "INVALID_ARGUMENT",
    });
    const backfill = await t.call("POST", "/v1/schedules/orders-every-10s/backfill", {
      start_at: at,
      end_at: "2026-12-01T01:00:00Z",
    });
    expect({ offset, status: backfill.status }).toEqual({ offset, status: 400 });
    const preview = await t.call("GET", `/v1/preview?cron=0%20*%20*%20*%20*&from=${encodeURIComponent(at)}`);
    expect({ offset, status: preview.status }).toEqual({ offset, status: 400 });
    const list = await t.call("GET", `/v1/executions?created_after=${encodeURIComponent(at)}`);
    expect({ offset, status: list.status }).toEqual({ offset, status: 400 });
  }
  // RFC 3339's extremes are real offsets.
  const ok = await t.call("POST", "/v1/schedules", {
    ...base,
    schedule_id: "edge",
    cron: "0 * * * *",
    start_at: "2026-12-01T00:00:00+23:59",
  });
  expect(ok.status).toBe(201);
  expect(ok.body.start_at).toBe("2026-11-30T00:01:00Z"); // in UTC, as every time the API shows
  expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.end_at).toBeUndefined();
  expect((await t.call("GET", "/v1/executions")).body.executions).toEqual([]);
});

it("keeps start_at and end_at in UTC, rounds past the millisecond inward, and refuses years past 9999", async () => {
  const created = await t.call("POST", "/v1/schedules", {
    ...base,
    schedule_id: "kolkata",
    interval: "10s",
    start_at: "2026-12-01T05:30:00.0001+05:30",
    end_at: "2026-12-01T05:31:00.9999+05:30",
  });
  expect(created.status).toBe(201);
  // No occurrence before start_at: a start_at a tenth of a microsecond past :00 starts at .001.
  expect([created.body.start_at, created.body.end_at]).toEqual([
    "2026-12-01T00:00:00.001Z",
    "2026-12-01T00:01:00.999Z",
  ]);
  const read = (await t.call("GET", "/v1/schedules/kolkata")).body;
  expect([read.start_at, read.end_at]).toEqual(["2026-12-01T00:00:00.001Z", "2026-12-01T00:01:00.999Z"]);
  const patched = await t.call("PATCH", "/v1/schedules/kolkata", { end_at: "2026-12-01T01:00:00-01:00" });
  expect(patched.body.end_at).toBe("2026-12-01T02:00:00Z");
  // 23:00 on the last day of 9999 at UTC-5 is year 10000 in UTC, which no API time can write.
  for (const [key, value] of [
    ["start_at", "9999-12-31T23:00:00-05:00"],
    ["end_at", "9999-12-31T23:59:59.9999999-00:01"],
    ["start_at", "0000-01-01T00:30:00+01:00"],
  ]) {
    const refused = await t.call("PATCH", "/v1/schedules/kolkata", { [key as string]: value });
    expect({ key, status: refused.status, code: refused.body.code, message: refused.body.message }).toEqual({
      key,
      status: 400,
      code: "INVALID_ARGUMENT",
      message: expect.stringMatching(
        /^(start|end)_at ".*" is (before year 0000|after year 9999) in UTC; times run from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z$/,
      ),
    });
  }
  expect((await t.call("GET", "/v1/schedules/kolkata")).body.end_at).toBe("2026-12-01T02:00:00Z");
});

it("a duration setting that is not the timing is INVALID_ARGUMENT whatever is wrong with it; the timing's is INVALID_SCHEDULE", async () => {
  // An unparsable run_timeout or start_timeout was INVALID_SCHEDULE, out of range INVALID_ARGUMENT.
  for (const [setting, value] of [
    ["run_timeout", "soon"],
    ["run_timeout", "0s"],
    ["start_timeout", "1x"],
    ["jitter", "abc"],
    ["catchup_window", "5q"],
  ]) {
    const r = await t.call("POST", "/v1/schedules", {
      ...base,
      schedule_id: "d",
      interval: "1h",
      [setting as string]: value,
    });
    expect({ setting, value, status: r.status, code: r.body.code }).toEqual({
      setting,
      value,
      status: 400,
      code: "INVALID_ARGUMENT",
    });
  }
  const timing = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "d", interval: "soon" });
  expect({ status: timing.status, code: timing.body.code }).toEqual({ status: 400, code: "INVALID_SCHEDULE" });
  expect((await t.call("GET", "/v1/schedules/d")).status).toBe(404);
});

it("tells a number given for a duration to write it as a text, and a null for a setting that cannot be unset that it is null", async () => {
  // `"interval": 3600` was told "interval must be a string or null" (a tester coming from seconds).
  const interval = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "bad", interval: 3600 });
  expect([interval.status, interval.body]).toEqual([
    400,
    {
      code: "INVALID_ARGUMENT",
      message:
        'interval must be a duration text such as "90s", "15m" or "1h30m", not a number (3600 seconds is "3600s")',
    },
  ]);
  const window = await t.call("PATCH", "/v1/schedules/orders-every-10s", { catchup_window: 90 });
  expect(window.body.message).toBe(
    'catchup_window must be a duration text such as "90s", "15m" or "1h30m", not a number (90 seconds is "90s")',
  );
  // A cron is no duration: it keeps its message.
  expect((await t.call("POST", "/v1/schedules", { ...base, schedule_id: "bad", cron: 5 })).body.message).toBe(
    "cron must be a string or null",
  );
  const workflow = await t.call("PATCH", "/v1/schedules/orders-every-10s", { workflow: null });
  expect([workflow.status, workflow.body.message]).toEqual([400, "workflow must be a string, not null"]);
  expect((await t.call("GET", "/v1/schedules/bad")).status).toBe(404);
  expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body).toMatchObject({ interval: "10s", revision: 1 });
});

it("says a '+' typed unencoded in a query's time arrived as a space, on every route that reads one", async () => {
  // `?created_after=…12:00:00+01:00` said only "must be a valid date-time" (a tester).
  const hint = '; a "+" in a URL\'s query arrives as a space: send it as %2B';
  const listed = await t.call("GET", "/v1/executions?created_after=2026-12-07T12:00:00+01:00");
  expect([listed.status, listed.body.message]).toEqual([
    400,
    `query parameter created_after must be a valid date-time${hint}`,
  ]);
  const preview = await t.call("GET", "/v1/preview?cron=0%202%20*%20*%20*&from=2026-03-28T12:00:00+01:00");
  expect([preview.status, preview.body.message]).toEqual([
    400,
    `from "2026-03-28T12:00:00 01:00" is not an RFC 3339 time with an offset, such as "2026-11-15T18:51:00Z"${hint}`,
  ]);
  // Encoded, both read it.
  expect((await t.call("GET", "/v1/executions?created_after=2026-12-07T12:00:00%2B01:00")).status).toBe(200);
  expect((await t.call("GET", "/v1/preview?cron=0%202%20*%20*%20*&from=2026-03-28T12:00:00%2B01:00")).status).toBe(200);
});
