/**
 * GET /v1/schedules/{id}/notifications pages (docs/outcomes.md § Notifications): newest first,
 * `limit` rows (100 by default) and a `next_cursor` for the rest. It answered the newest 100 and no
 * more, with no way to read the others (a tester: 130 failure calls delivered, 100 listed).
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
  await t.ok("POST", "/v1/schedules", {
    schedule_id: "alerting",
    workflow: "OrderProcessing",
    interval: "1h",
    input: { order_id: "3f1c2a4e-8b7d-4c1e-9a2b-5d6e7f8a9b0c", amount: 1 },
    notify: "http://127.0.0.1:9/hook",
  });
  // 130 deliveries, written beside the server as its notifier would (their calls are not the point).
  const db = new Database(join(t.dir, "orbit.db"));
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(
    `INSERT INTO orbit_notifications (schedule_id, workflow, event, url, payload, state, attempts, next_attempt_ms, created_ms)
     VALUES ('alerting', 'OrderProcessing', 'failure', 'http://127.0.0.1:9/hook', ?, 'delivered', 1, NULL, ?)`,
  );
  db.transaction(() => {
    for (let n = 0; n < 130; n++) insert.run(JSON.stringify({ n }), 1_800_000_000_000 + n);
  })();
  db.close();
});
afterAll(() => t.stop());

const payloads = (body: { notifications: { payload: { n: number } }[] }) => body.notifications.map((x) => x.payload.n);

it("answers the newest 100 by default with a cursor to the rest, and pages to the end", async () => {
  const first = await t.ok("GET", "/v1/schedules/alerting/notifications");
  expect(first.notifications).toHaveLength(100);
  expect(payloads(first)[0]).toBe(129);
  expect(typeof first.next_cursor).toBe("string");
  const rest = await t.ok("GET", `/v1/schedules/alerting/notifications?cursor=${first.next_cursor}`);
  expect(payloads(rest)).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i));
  expect(rest.next_cursor).toBeNull();
});

it("takes a limit from 1 to 1000, and refuses a cursor it did not issue", async () => {
  const page = await t.ok("GET", "/v1/schedules/alerting/notifications?limit=3");
  expect(payloads(page)).toEqual([129, 128, 127]);
  const next = await t.ok("GET", `/v1/schedules/alerting/notifications?limit=3&cursor=${page.next_cursor}`);
  expect(payloads(next)).toEqual([126, 125, 124]);
  for (const query of ["limit=0", "limit=1001", "cursor=0x10", "cursor=-1"]) {
    const r = await t.call("GET", `/v1/schedules/alerting/notifications?${query}`);
    expect(r.status, query).toBe(400);
    expect((r.body as { code: string }).code).toBe("INVALID_ARGUMENT");
  }
});
