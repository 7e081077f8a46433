/**
 * Edges a fuzzer found between the named cases (docs/security.md § Limits), SQLite: an empty or
 * half-quoted If-Match no longer switches the revision check off, a step's seq past any stored
 * integer is refused, and a batch complete naming one task twice is refused instead of answering
 * CONFLICT for a completion that happened.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { ORDER_INPUT, startTestServer, type TestServer } from "./helpers.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ worker: { pollTimeoutMs: 0 } });
  await t.registerOrders();
  await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
  await t.ok("POST", "/v1/schedules", {
    schedule_id: "s",
    workflow: "OrderProcessing",
    interval: "1h",
    input: ORDER_INPUT,
  });
});
afterAll(() => t.stop());

const patch = (ifMatch: string) =>
  fetch(`${t.server.url}/v1/schedules/s`, {
    method: "PATCH",
    headers: { "content-type": "application/json", "if-match": ifMatch },
    body: JSON.stringify({ description: "changed" }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code?: string; message?: string } }));

it("refuses a body that is not UTF-8 instead of storing U+FFFD in its place", async () => {
  for (const bytes of [Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from([0xed, 0xa0, 0x80])]) {
    const body = Buffer.concat([
      Buffer.from('{"execution_id":"u1","workflow":"W","input":{"name":"'),
      bytes,
      Buffer.from('"}}'),
    ]);
    const r = await fetch(`${t.server.url}/v1/executions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect({ status: r.status, body: await r.json() }).toEqual({
      status: 400,
      body: { code: "INVALID_ARGUMENT", message: "the request body is not valid UTF-8" },
    });
  }
  expect((await t.call("GET", "/v1/executions/u1")).status).toBe(404);
});

it("refuses a cron longer than the preview takes, on create and update", async () => {
  const cron = `0 0 1 1 ${Array.from({ length: 100 }, () => "1-7").join(",")}`;
  const created = await t.call("POST", "/v1/schedules", { schedule_id: "long", workflow: "W", cron });
  expect({ status: created.status, ...created.body }).toEqual({
    status: 400,
    code: "INVALID_SCHEDULE",
    message: `cron is ${cron.length} characters long; the most is 200`,
  });
  expect((await t.call("PATCH", "/v1/schedules/s", { cron })).status).toBe(400);
  expect((await t.call("GET", "/v1/schedules/long")).status).toBe(404);
  // The preview refuses it with the create's answer (it said INVALID_ARGUMENT "query parameter cron
  // must be at most 200 characters long"; a tester).
  const preview = await t.call("GET", `/v1/preview?cron=${encodeURIComponent(cron)}`);
  expect({ status: preview.status, ...preview.body }).toEqual({ status: 400, ...created.body });
});

it("refuses a long timezone or dst with the code of any other refused one", async () => {
  // INVALID_ARGUMENT when long, INVALID_SCHEDULE otherwise: a client branching on the code could
  // not tell them apart (a tester).
  for (const field of ["timezone", "dst"]) {
    const long = await t.call("POST", "/v1/schedules", {
      schedule_id: "z",
      workflow: "W",
      cron: "0 0 1 1 *",
      [field]: "x".repeat(300),
    });
    const short = await t.call("POST", "/v1/schedules", {
      schedule_id: "z",
      workflow: "W",
      cron: "0 0 1 1 *",
      [field]: "xxx",
    });
    expect([field, long.status, long.body.code]).toEqual([field, 400, "INVALID_SCHEDULE"]);
    expect([field, short.status, short.body.code]).toEqual([field, 400, "INVALID_SCHEDULE"]);
  }
  expect((await t.call("GET", "/v1/schedules/z")).status).toBe(404);
});

it("cuts an error message that quotes a huge value instead of sending it back whole, keeping its reason", async () => {
  const name = "W".repeat(70_000);
  const r = await t.call("POST", "/v1/executions", { workflow: name, input: {} });
  expect([r.status, r.body.code]).toEqual([400, "INVALID_ARGUMENT"]);
  expect(r.body.message.length).toBeLessThan(2100);
  expect(r.body.message).toMatch(/^workflow name "W{10,}… \(\d+ characters left out\) …W+" is invalid/);
  // Cut at its end, a 3,000-character id left 2,000 characters of the id and not why (a tester's fuzz).
  const id = await t.call("POST", "/v1/schedules", { schedule_id: "a".repeat(3000), workflow: "W", cron: "0 0 1 1 *" });
  expect([id.status, id.body.code]).toEqual([400, "INVALID_ARGUMENT"]);
  expect(id.body.message).toMatch(/ characters left out\) …a+" is invalid: use 1 to 100 letters, digits/);
});

it("reads whole-number query parameters as decimal digits only", async () => {
  for (const q of ["limit=0x10", "limit=1e1", "limit=%201", "limit=1.0"]) {
    const r = await t.call("GET", `/v1/schedules?${q}`);
    expect({ q, status: r.status, message: r.body.message }).toEqual({
      q,
      status: 400,
      message: "query parameter limit must be a whole number in decimal digits",
    });
  }
  const hex = await t.call("PATCH", "/v1/schedules/s?expected_revision=0x1", { description: "x" });
  expect(hex.status).toBe(400);
  expect((await t.call("GET", "/v1/schedules?limit=1")).status).toBe(200);
  // 16 digits are whole numbers too (refused by a 15-digit limit as not being one); past 2^53 - 1,
  // the OpenAPI's maximum, the range is what is wrong.
  await t.ok("POST", "/v1/schedules", { schedule_id: "big-rev", workflow: "W", interval: "1h" });
  const stale = await t.call("POST", "/v1/schedules/big-rev/pause?expected_revision=9007199254740991");
  expect([stale.status, stale.body.code]).toEqual([409, "CONFLICT"]);
  expect((await t.call("GET", "/v1/schedules?limit=0000000000000001")).status).toBe(200);
  // The route's own bound where it has one, as for limit=5000 (it named JSON's whole numbers).
  const past = await t.call("GET", "/v1/schedules?limit=9007199254740992");
  expect([past.status, past.body.message]).toEqual([400, "query parameter limit must be at most 1000"]);
  const below = await t.call("GET", "/v1/schedules?limit=-99999999999999999999");
  expect([below.status, below.body.message]).toEqual([400, "query parameter limit must be at least 1"]);
  const count = await t.call("GET", "/v1/preview?interval=1h&count=99999999999999999999");
  expect([count.status, count.body.message]).toEqual([400, "query parameter count must be at most 50"]);
  const revision = await t.call("POST", "/v1/schedules/big-rev/pause?expected_revision=99999999999999999999");
  expect([revision.status, revision.body.message]).toEqual([
    400,
    "query parameter expected_revision must be at most 9007199254740991",
  ]);
});

it("refuses a workflow name or version no workflow can have, 400 on every route, as registration does", async () => {
  // A start answered these 404 "workflow W@<script> is not registered", a schedule 404 for the name.
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    [
      "POST",
      "/v1/executions",
      { execution_id: "v1", workflow: "W", version: "<script>" },
      /version "<script>" is not a semver version/,
    ],
    ["POST", "/v1/executions", { execution_id: "v2", workflow: "a b" }, /workflow name "a b" is invalid/],
    ["POST", "/v1/schedules", { schedule_id: "n1", workflow: "a b", interval: "1h" }, /workflow name "a b" is invalid/],
    ["POST", "/v1/workflows", { name: "a b", version: "1.0.0" }, /workflow name "a b" is invalid/],
  ];
  for (const [method, path, body, message] of cases) {
    const r = await t.call(method, path, body);
    expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 400, code: "INVALID_ARGUMENT" });
    expect(r.body.message).toMatch(message);
  }
  expect((await t.call("GET", "/v1/executions/v1")).status).toBe(404);
  expect((await t.call("GET", "/v1/schedules/n1")).status).toBe(404);
});

it("says a query parameter given twice is given twice, and changes nothing", async () => {
  await t.ok("POST", "/v1/schedules", { schedule_id: "twice", workflow: "W", interval: "1h" });
  for (const [method, path] of [
    ["GET", "/v1/schedules?limit=5&limit=6"],
    ["GET", "/v1/schedules?state=active&state=paused"],
    ["POST", "/v1/schedules/twice/pause?expected_revision=1&expected_revision=2"],
  ] as const) {
    const r = await t.call(method, path);
    expect({ path, status: r.status, body: r.body }).toEqual({
      path,
      status: 400,
      body: {
        code: "INVALID_ARGUMENT",
        message: `query parameter ${/\?(\w+)=/.exec(path)![1]} is given more than once; give it once`,
      },
    });
  }
  expect((await t.ok("GET", "/v1/schedules/twice")).paused).toBe(false);
  // A parameter no route reads is ignored however often it comes, as once: the UI's page, health.
  for (const path of ["/?a=1&a=2", "/healthz?x=1&x=1"]) {
    expect({ path, status: (await t.call("GET", path)).status }).toEqual({ path, status: 200 });
  }
});

it("refuses a body on a write that takes none, and does nothing", async () => {
  await t.ok("POST", "/v1/schedules", { schedule_id: "keep", workflow: "W", interval: "1h" });
  for (const body of ["[]", "null", "1", '{"bogus":1}']) {
    const r = await t.call("DELETE", "/v1/schedules/keep", body);
    expect({ body, status: r.status, message: r.body.message }).toEqual({
      body,
      status: 400,
      message: "DELETE /v1/schedules/{id} takes no request body",
    });
  }
  expect((await t.call("GET", "/v1/schedules/keep")).status).toBe(200);
  expect((await t.call("DELETE", "/v1/schedules/keep")).status).toBe(204);
});

it("refuses a query parameter on an API route that takes none, and does nothing", async () => {
  // `?expected_revision=` on a cancel was ignored and the cancel went ahead unconditionally.
  await t.ok("POST", "/v1/executions", { execution_id: "q-1", workflow: "W", input: {} });
  for (const [method, path, body] of [
    ["POST", "/v1/executions/q-1/cancel?expected_revision=99", { reason: "x" }],
    ["POST", "/v1/executions?bogus=1", { execution_id: "q-2", workflow: "W", input: {} }],
    ["GET", "/v1/executions/q-1?verbose=1", undefined],
    // The worker protocol's routes too (they are registered apart from the others).
    ["POST", "/v1/worker/heartbeat?expected_revision=1", { worker_id: "q-w", task_ids: [] }],
    ["POST", "/v1/worker/leave?bogus=1", { worker_id: "q-w" }],
  ] as const) {
    const r = await t.call(method, path, body);
    const [route, param] = [path.split("?")[0]!.replace("q-1", "{id}"), /\?(\w+)=/.exec(path)![1]];
    expect({ path, status: r.status, body: r.body }).toEqual({
      path,
      status: 400,
      body: {
        code: "INVALID_ARGUMENT",
        message: `unknown field "${param}" in the query string: ${method} ${route} takes no query parameters`,
      },
    });
  }
  expect((await t.ok("GET", "/v1/executions/q-1")).status).toBe("RUNNING");
  expect((await t.call("GET", "/v1/executions/q-2")).status).toBe(404);
});

it("refuses an empty or half-quoted If-Match and changes nothing", async () => {
  for (const header of ["", '"1', '1"', 'W/"1']) {
    const r = await patch(header);
    expect({ header, status: r.status, code: r.body.code }).toEqual({ header, status: 400, code: "INVALID_ARGUMENT" });
  }
  expect((await t.ok("GET", "/v1/schedules/s")).revision).toBe(1);
  // Entity tags compare as text (RFC 9110 § 8.8.3.2): "01" is not the ETag "1", so it does not match.
  for (const header of ['"01"', "01", '"01", "001"']) {
    const r = await patch(header);
    expect({ header, status: r.status, body: r.body }).toEqual({
      header,
      status: 412,
      body: {
        code: "PRECONDITION_FAILED",
        message: `schedule s is at revision 1, not ${header.replaceAll('"', "").replace(", ", " or ")} (If-Match); read it again`,
      },
    });
  }
  expect((await patch('"1"')).status).toBe(200);
  expect((await patch("2")).status).toBe(200);
});

it("refuses a poll offering a workflow name or version nothing can be registered as", async () => {
  const cases = [
    [{ ...offer[0], version: "1.0" }, 'workflows[0]: version "1.0" of W is not a semver version'],
    [{ ...offer[0], version: "v1.0.0" }, 'workflows[0]: version "v1.0.0" of W is not a semver version'],
    [{ ...offer[0], name: "a b" }, 'workflows[0]: workflow name "a b" is invalid'],
    // The limit said is the one registration has (it said "at most 200" for 201 characters).
    [{ ...offer[0], name: "w".repeat(129) }, "workflows[0].name must be at most 128 characters long"],
  ] as const;
  const twice = await t.call("POST", "/v1/worker/poll", {
    worker_id: "w1",
    workflows: [offer[0], { ...offer[0], max_attempts: 1 }],
    wait_ms: 0,
  });
  expect({ status: twice.status, body: twice.body }).toEqual({
    status: 400,
    body: {
      code: "INVALID_ARGUMENT",
      message: "workflows[1]: W@1.0.0 is offered already (workflows[0]); offer each version once",
    },
  });
  for (const [workflow, message] of cases) {
    const r = await t.call("POST", "/v1/worker/poll", { worker_id: "w1", workflows: [workflow], wait_ms: 0 });
    expect({ status: r.status, code: r.body.code, message: String(r.body.message).slice(0, message.length) }).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message,
    });
  }
});

it("refuses a step seq no integer column holds, and a batch complete naming a task twice", async () => {
  await t.ok("POST", "/v1/executions", { execution_id: "e-1", workflow: "W", input: {} });
  const polled = await t.ok("POST", "/v1/worker/poll", { worker_id: "w1", workflows: offer, max_tasks: 1, wait_ms: 0 });
  const task = (polled.tasks as { task_id: string }[])[0]!.task_id;
  for (const seq of ["1e400", "9007199254740993", "1e308"]) {
    const r = await t.call(
      "POST",
      `/v1/worker/tasks/${task}/steps`,
      `{"worker_id":"w1","step":"a","seq":${seq},"result":1,"compensable":false}`,
    );
    expect({ seq, status: r.status }).toEqual({ seq, status: 400 });
  }
  const twice = await t.call("POST", "/v1/worker/complete", {
    worker_id: "w1",
    tasks: [
      { task_id: task, result: { first: 1 } },
      { task_id: task, result: { second: 2 } },
    ],
  });
  expect({ status: twice.status, message: twice.body.message }).toEqual({
    status: 400,
    message: `tasks: task ${task} appears twice`,
  });
  const e = await t.ok("GET", "/v1/executions/e-1");
  expect(e.status).toBe("RUNNING");
  expect((await t.ok("GET", "/v1/executions/e-1/events")).events.map((x: { type: string }) => x.type)).not.toContain(
    "StepCompleted",
  );
});

it("answers headers over 16 KB with 431 and a {code, message} body typed as every other error", async () => {
  const r = await t.call("GET", "/v1/schedules", undefined, { "x-padding": "p".repeat(20 * 1024) });
  expect(r.status).toBe(431);
  // Written by hand before fastify sees the request: it said `application/json` without the charset.
  expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(r.body).toEqual({
    code: "INVALID_ARGUMENT",
    message: "the request headers are larger than the server accepts (16 KB)",
  });
});
