/**
 * Access control (docs/design.md § Access control): bearer tokens from a --config file, 401/403,
 * filtered lists, workers.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

const sha = (token: string) => createHash("sha256").update(token).digest("hex");
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let t: TestServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "orbit-access-"));
  const config = join(dir, "identities.yaml");
  writeFileSync(
    config,
    `identities:
  - name: umlaut
    token_sha256: ${sha("päss-wört")}
    kind: client
    allow:
      - workflows: "*"
        actions: [read]
  - name: admin
    token_sha256: ${sha("admin-token")}
    kind: client
    allow:
      - workflows: "*"
        actions: [schedule, start, read, cancel]
  - name: orders
    token_sha256: ${sha("orders-token")}
    kind: client
    allow:
      - workflows: "Order*"
        actions: [schedule, read]
  - name: runner
    token_sha256: ${sha("worker-token")}
    kind: worker
    allow:
      - workflows: "*"
`,
  );
  t = await startTestServer({ config });
  for (const name of ["OrderProcessing", "Billing"]) {
    await t.call("POST", "/v1/workflows", { name, version: "1.0.0" }, as("admin-token"));
  }
  await t.call("POST", "/v1/schedules", SEED_SCHEDULE, as("admin-token"));
  await t.call(
    "POST",
    "/v1/schedules",
    { ...SEED_SCHEDULE, schedule_id: "billing", workflow: "Billing" },
    as("admin-token"),
  );
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("answers 401 without a token or with an unknown one; health stays open", async () => {
  const none = await t.call("GET", "/v1/schedules");
  expect(none.status).toBe(401);
  expect(none.body.code).toBe("UNAUTHENTICATED");
  expect(none.body.message).toMatch(/Authorization: Bearer <token>/);
  // RFC 9110 § 11.6.1: a 401 names the scheme it takes.
  expect(none.headers.get("www-authenticate")).toBe('Bearer realm="orbit"');
  expect((await t.call("GET", "/v1/schedules", undefined, as("wrong"))).body.message).toBe(
    "the bearer token is not one this server knows",
  );
  expect((await t.call("GET", "/v1/schedules", undefined, { authorization: "Basic x" })).status).toBe(401);
  // A blank inside the token was told only the header's form (a tester).
  expect((await t.call("GET", "/v1/schedules", undefined, { authorization: "Bearer ord x" })).body.message).toBe(
    "the bearer token holds a blank, which no token has: send the token alone after Bearer",
  );
  // A token outside ASCII, sent as curl sends it (UTF-8 bytes), matches the sha256sum of its text:
  // the header's bytes were read as latin1 and it never matched.
  const utf8 = Buffer.from("Bearer päss-wört", "utf8").toString("latin1");
  expect((await t.call("GET", "/v1/me", undefined, { authorization: utf8 })).body).toMatchObject({ name: "umlaut" });
  expect((await t.call("GET", "/healthz")).status).toBe(200);
  expect((await t.call("GET", "/v1/openapi.json")).status).toBe(200);
  // A route that does not exist is refused the same way (it was 404, to anyone): a known caller
  // hears it does not exist.
  expect((await t.call("GET", "/v1/nothing")).status).toBe(401);
  expect((await t.call("GET", "/v1")).status).toBe(401);
  expect((await t.call("GET", "/v1/nothing", undefined, as("wrong"))).status).toBe(401);
  expect((await t.call("GET", "/v1/nothing", undefined, as("admin-token"))).status).toBe(404);
});

it("lists only the schedules of workflows the client may schedule", async () => {
  const admin = await t.call("GET", "/v1/schedules", undefined, as("admin-token"));
  expect(admin.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual([
    "billing",
    "orders-every-10s",
  ]);
  const orders = await t.call("GET", "/v1/schedules", undefined, as("orders-token"));
  expect(orders.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toEqual(["orders-every-10s"]);
});

it("searches in memory what it may see, with the same filters as the database", async () => {
  // With access control the search runs over the visible rows in code (schedule-search.ts).
  const ghost = { schedule_id: "order-ghost", workflow: "OrderGhost", interval: "1m" };
  const applied = await t.call(
    "POST",
    "/v1/schedules/apply",
    { schedules: [ghost], allow_unregistered: true },
    as("admin-token"),
  );
  expect(applied.status).toBe(200);
  const ids = async (query: string, token: string) =>
    (await t.call("GET", `/v1/schedules?${query}`, undefined, as(token))).body.schedules.map(
      (s: { schedule_id: string }) => s.schedule_id,
    );
  expect(await ids("outcome=not_starting", "orders-token")).toEqual(["order-ghost"]);
  expect(await ids("outcome=none&sort=id", "orders-token")).toEqual(["order-ghost", "orders-every-10s"]);
  expect(await ids("outcome=failed", "orders-token")).toEqual([]);
  expect((await t.call("DELETE", "/v1/schedules/order-ghost", undefined, as("admin-token"))).status).toBe(204);
});

it("pages through only the executions it may read, with cursors that name none it may not", async () => {
  // Filtered after the read, a page came back empty with a cursor made of the hidden row after it
  // (base64 of its creation time and id): paging named every hidden execution (a tester).
  const started: string[] = [];
  const runs: [id: string, workflow: string][] = [
    ["order-a", "OrderProcessing"],
    ["bill-a", "Billing"],
    ["bill-b", "Billing"],
    ["order-b", "OrderProcessing"],
    ["bill-c", "Billing"],
  ];
  for (const [id, workflow] of runs) {
    const r = await t.call("POST", "/v1/executions", { execution_id: id, workflow }, as("admin-token"));
    expect(r.status).toBe(201);
    started.push(id);
  }
  const seen: string[] = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { executions: { execution_id: string }[]; next_cursor: string | null } } =
      await t.call(
        "GET",
        `/v1/executions?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        undefined,
        as("orders-token"),
      );
    expect(page.status).toBe(200);
    expect(page.body.executions).toHaveLength(1);
    seen.push(...page.body.executions.map((e) => e.execution_id));
    cursor = page.body.next_cursor;
    if (cursor !== null) cursors.push(Buffer.from(cursor, "base64").toString("utf8"));
  } while (cursor !== null);
  expect(seen.sort()).toEqual(["order-a", "order-b"]);
  expect(cursors.join(" ")).not.toMatch(/bill/);
  const billing = await t.call("GET", "/v1/executions?workflow=Billing", undefined, as("orders-token"));
  expect(billing.body).toEqual({ executions: [], next_cursor: null });
  const admin = await t.call("GET", "/v1/executions?limit=10", undefined, as("admin-token"));
  expect(admin.body.executions.map((e: { execution_id: string }) => e.execution_id).sort()).toEqual(started.sort());
});

it("answers 404 for a schedule it may not see and 403 for a workflow it names, changing nothing", async () => {
  // As if it did not exist (docs/security.md § Access matrix): a 403 would say that it does.
  const r = await t.call("POST", "/v1/schedules/billing/pause", {}, as("orders-token"));
  expect(r.status).toBe(404);
  expect(r.body).toEqual({ code: "NOT_FOUND", message: "schedule billing does not exist" });
  expect((await t.call("GET", "/v1/schedules/billing", undefined, as("admin-token"))).body.paused).toBe(false);
  expect((await t.call("POST", "/v1/schedules/orders-every-10s/pause", {}, as("orders-token"))).status).toBe(200);
  const start = await t.call("POST", "/v1/executions", { workflow: "OrderProcessing" }, as("orders-token"));
  expect(start.status).toBe(403);
  expect(start.body).toEqual({
    code: "PERMISSION_DENIED",
    message: 'identity orders may not start workflow "OrderProcessing" (it may: schedule/read on "Order*")',
  });
  // With an If-Match (412 on a start, which has no revision), the refusal of the caller comes first.
  const fenced = await t.call(
    "POST",
    "/v1/executions",
    { workflow: "OrderProcessing" },
    {
      ...as("orders-token"),
      "if-match": '"1"',
    },
  );
  expect({ status: fenced.status, code: fenced.body.code }).toEqual({ status: 403, code: "PERMISSION_DENIED" });
});

it("refuses worker identities on /v1/schedules", async () => {
  const r = await t.call("GET", "/v1/schedules", undefined, as("worker-token"));
  expect(r.status).toBe(403);
  expect(r.body.message).toBe(
    "identity runner is a worker: workers use the worker protocol only, and may not manage schedules or executions",
  );
  const register = await t.call("POST", "/v1/workflows", { name: "Shipping", version: "1.0.0" }, as("worker-token"));
  expect(register.status).toBe(201);
});

it("refuses client identities on the worker protocol before judging the body", async () => {
  // A body error answered a client first (400 `workflows[0] needs "max_attempts"`), where every
  // other route refuses the caller before reading its body (a tester).
  for (const body of [
    { worker_id: "w", workflows: [{ name: "OrderProcessing", version: "1.0.0" }] },
    { bogus: 1 },
    "{bad",
    '{"a":1,"a":2}',
  ]) {
    const r = await t.call("POST", "/v1/worker/poll", body, as("orders-token"));
    expect([r.status, r.body]).toEqual([
      403,
      { code: "PERMISSION_DENIED", message: "orders is a client identity; /v1/worker needs a worker identity" },
    ]);
  }
});

it("refuses worker identities on /v1/schedules before reading the body", async () => {
  for (const body of ["{bad", '{"a":1,"a":2}', { schedule_id: "x" }]) {
    const r = await t.call("POST", "/v1/schedules", body, as("worker-token"));
    expect([r.status, r.body.code]).toEqual([403, "PERMISSION_DENIED"]);
  }
  // Nor its content type: who is calling is asked first (401 for no one, 403 for the wrong kind).
  const xml = { ...as("worker-token"), "content-type": "application/xml" };
  expect((await t.call("POST", "/v1/schedules", "<x/>", xml)).status).toBe(403);
  const plain = { ...as("orders-token"), "content-type": "text/plain" };
  expect((await t.call("POST", "/v1/worker/poll", "hi", plain)).status).toBe(403);
  expect((await t.call("POST", "/v1/schedules", "hi", { "content-type": "text/plain" })).status).toBe(401);
});

it("refuses an invalid identities file at start", async () => {
  const bad = join(dir, "bad.yaml");
  writeFileSync(bad, "identities:\n  - name: x\n    token: abc\n    kind: client\n");
  await expect(startTestServer({ config: bad })).rejects.toThrow(
    /bad\.yaml: unknown field "token" in identities\[0\] \(known: name, token_sha256,/,
  );
});

it("refuses two identities of one name, and says the allowed values of a wrong kind or action", async () => {
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  // A lease belongs to an identity by name: the second "pool" completed the first one's task.
  const twins = file(
    "twins.yaml",
    `identities:
  - { name: pool, token_sha256: ${sha("a")}, kind: worker }
  - { name: pool, token_sha256: ${sha("b")}, kind: worker }
`,
  );
  await expect(startTestServer({ config: twins })).rejects.toThrow(
    /twins\.yaml: two identities are named "pool"; a lease belongs to the identity that took it, by name, so give each its own/,
  );
  const robot = file("robot.yaml", `identities:\n  - { name: r, token_sha256: ${sha("c")}, kind: robot }\n`);
  await expect(startTestServer({ config: robot })).rejects.toThrow(
    /identities\[0\]\.kind must be one of client, worker/,
  );
  const reed = file(
    "reed.yaml",
    `identities:\n  - name: r\n    token_sha256: ${sha("d")}\n    kind: client\n    allow:\n      - { workflows: "*", actions: [reed] }\n`,
  );
  await expect(startTestServer({ config: reed })).rejects.toThrow(
    /identities\[0\]\.allow\[0\]\.actions\[0\] must be one of schedule, start, read, cancel; did you mean "read"\?/,
  );
  // A client entry copied with its kind changed: its actions gave a worker token a client's
  // powers over its workflows (start, settings, deprecate; a tester).
  const acting = file(
    "acting.yaml",
    `identities:\n  - name: wk\n    token_sha256: ${sha("e")}\n    kind: worker\n    allow:\n      - { workflows: "Order*", actions: [schedule, start] }\n`,
  );
  await expect(startTestServer({ config: acting })).rejects.toThrow(
    /acting\.yaml: identity "wk" is a worker, whose allow rules name workflows only; remove its actions, or make it a client \(kind: client\) to start or change them/,
  );
});

it("tells a worker what it may work on when it registers outside its rules, and that it may not start its own", async () => {
  const path = join(dir, "narrow.yaml");
  writeFileSync(
    path,
    `identities:\n  - name: quick\n    token_sha256: ${sha("quick-token")}\n    kind: worker\n    allow:\n      - workflows: "Quick"\n`,
  );
  const narrow = await startTestServer({ config: path });
  try {
    const r = await narrow.call("POST", "/v1/workflows", { name: "Billing", version: "1.0.0" }, as("quick-token"));
    expect({ status: r.status, message: r.body.message }).toEqual({
      status: 403,
      message: 'identity quick may not work on workflow "Billing" (it may: work on "Quick")',
    });
    // A start of a workflow it works on: refused for the action, not for the workflow.
    const start = await narrow.call("POST", "/v1/executions", { workflow: "Quick", input: {} }, as("quick-token"));
    expect({ status: start.status, message: start.body.message }).toEqual({
      status: 403,
      message:
        'identity quick is a worker: it may work on and read workflow "Quick", not start it (docs/security.md § Identities)',
    });
  } finally {
    await narrow.stop();
  }
});

it("refuses two Authorization headers (Node keeps the first; a proxy may read the last)", async () => {
  const { request } = await import("node:http");
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      `${t.server.url}/v1/schedules`,
      // Two header lines: an array is how node:http sends a repeated header.
      { headers: { authorization: ["Bearer orders-token", "Bearer admin-token"] as unknown as string } },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
  expect(answer.status).toBe(401);
  expect(JSON.parse(answer.body)).toEqual({
    code: "UNAUTHENTICATED",
    message: "the request carries more than one Authorization header: send one",
  });
  expect((await t.call("GET", "/v1/schedules", undefined, as("orders-token"))).status).toBe(200);
});
