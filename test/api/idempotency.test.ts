/** Idempotency-Key on writes: replay, 422 on reuse with another request, refused requests store nothing. */
import { afterEach, beforeEach, expect, it } from "vitest";
import { SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
  await t.registerOrders();
});
afterEach(async () => {
  await t.stop();
});

it("replays the first answer (status and body) for the same key and body", async () => {
  const key = { "idempotency-key": "create-1" };
  const first = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, key);
  expect(first.status).toBe(201);
  t.clock.advance(5000);
  const again = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, key);
  expect(again.status).toBe(201);
  expect(again.text).toBe(first.text);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(again.headers.get("etag")).toBe('"1"');
  // Without the key the same request is a new one, and refused.
  expect((await t.call("POST", "/v1/schedules", SEED_SCHEDULE)).status).toBe(409);
});

it("replays the input as it was written: 120.0 stays 120.0", async () => {
  // The replay parsed the stored answer with JSON.parse and wrote it again: "amount":120 where the
  // first answer (and every read of the schedule) says "amount":120.0.
  const key = { "idempotency-key": "create-text" };
  const body = `{"schedule_id":"text","workflow":"OrderProcessing","interval":"10s","input":{"order_id":"R-1","customer_id":"cust-1","amount":120.0,"items":[]}}`;
  const first = await t.call("POST", "/v1/schedules", body, key);
  expect(first.text).toContain('"amount":120.0');
  const again = await t.call("POST", "/v1/schedules", body, key);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(again.text).toBe(first.text);
  expect(again.headers.get("etag")).toBe('"1"');
});

it("answers 422 INVALID_ARGUMENT for the same key with another body", async () => {
  const key = { "idempotency-key": "k" };
  expect((await t.call("POST", "/v1/schedules", SEED_SCHEDULE, key)).status).toBe(201);
  const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "other" }, key);
  expect(r.status).toBe(422);
  expect(r.body.code).toBe("INVALID_ARGUMENT");
  expect(r.body.message).toMatch(/Idempotency-Key "k" was already used for a different request/);
  expect((await t.call("GET", "/v1/schedules/other")).status).toBe(404);
});

it("keeps keys per route: the same key on another path is another request", async () => {
  await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
  await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "second" });
  const key = { "idempotency-key": "pause" };
  expect((await t.call("POST", "/v1/schedules/orders-every-10s/pause", {}, key)).body.revision).toBe(2);
  expect((await t.call("POST", "/v1/schedules/second/pause", {}, key)).body.revision).toBe(2);
  const replay = await t.call("POST", "/v1/schedules/second/pause", {}, key);
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  expect((await t.call("GET", "/v1/schedules/second")).body.revision).toBe(2);
});

it("keeps one key per route however the URL spells it: a trailing slash or an escaped letter is the same route", async () => {
  // The scope was the raw URL, so `/v1/executions/` and `/v1/%65xecutions` with one key each started
  // another execution (a tester's fuzz).
  const key = { "idempotency-key": "start-once" };
  const body = { workflow: "OrderProcessing", input: SEED_SCHEDULE.input };
  const first = await t.call("POST", "/v1/executions", body, key);
  expect(first.status).toBe(201);
  for (const path of ["/v1/executions/", "/v1/%65xecutions", "/v1/executions"]) {
    const again = await t.call("POST", path, body, key);
    expect([path, again.status, again.headers.get("idempotent-replayed")]).toEqual([path, 201, "true"]);
    expect(again.body.execution_id).toBe(first.body.execution_id);
  }
  expect((await t.call("GET", "/v1/executions")).body.executions).toHaveLength(1);
  await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, overlap: "allow" });
  const trig = { "idempotency-key": "trigger-once" };
  const fired = await t.call("POST", "/v1/schedules/orders-every-10s/trigger", {}, trig);
  for (const path of ["/v1/schedules/orders-every-10s/trigger/", "/v1/schedules/orders-every-1%30s/trigger"]) {
    t.clock.advance(10);
    expect((await t.call("POST", path, {}, trig)).body).toEqual(fired.body);
  }
  expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.fired).toBe(1);
});

it("stores nothing for a refused request, so the key can be used again", async () => {
  const key = { "idempotency-key": "retry-me" };
  const refused = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, interval: "0s" }, key);
  expect(refused.status).toBe(400);
  const ok = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, key);
  expect(ok.status).toBe(201);
});

it("replays a DELETE's 204 and a trigger's answer", async () => {
  await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
  const trig = { "idempotency-key": "trigger-1" };
  const first = await t.call("POST", "/v1/schedules/orders-every-10s/trigger", {}, trig);
  t.clock.advance(1000);
  const again = await t.call("POST", "/v1/schedules/orders-every-10s/trigger", {}, trig);
  expect(again.status).toBe(201);
  expect(again.body).toEqual(first.body);
  expect((await t.call("GET", "/v1/schedules/orders-every-10s")).body.fired).toBe(1);
  const del = { "idempotency-key": "delete-1" };
  expect((await t.call("DELETE", "/v1/schedules/orders-every-10s", undefined, del)).status).toBe(204);
  const replay = await t.call("DELETE", "/v1/schedules/orders-every-10s", undefined, del);
  expect(replay.status).toBe(204);
  expect(replay.text).toBe("");
});

it("refuses a malformed key", async () => {
  const r = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, { "idempotency-key": "has space" });
  expect(r.status).toBe(400);
  expect(r.body.message).toMatch(/Idempotency-Key must be/);
  // Two headers arrive joined by ", " (as fetch sends two appended values): said as given twice.
  const twice = await t.call("POST", "/v1/schedules", SEED_SCHEDULE, { "idempotency-key": "k-1, k-2" });
  expect([twice.status, twice.body.message]).toEqual([400, "Idempotency-Key is given more than once; give it once"]);
  expect((await t.call("GET", "/v1/schedules")).body.schedules).toEqual([]);
});
