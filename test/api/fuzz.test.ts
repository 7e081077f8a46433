/**
 * API fuzz suite generated from the OpenAPI document (docs/security.md § Fuzzing): every route,
 * every body field replaced by hostile values (wrong types, huge and deep values, NUL and lone
 * surrogates, unicode, overflowing numbers), plus malformed JSON per route, on both dialects.
 * Asserts: never a 5xx, every refusal is `{code, message}`, and refused requests store nothing
 * (stored rows grow by at most the number of 2xx answers). `npm run fuzz:api` runs it with
 * ORBIT_FUZZ_ROUNDS (default 1, the short run inside `npm test`).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { ORDER_INPUT, SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

const ROUNDS = Number(process.env.ORBIT_FUZZ_ROUNDS ?? 1);
const nested = (n: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const HOSTILE: unknown[] = [
  null,
  true,
  -1,
  1e308,
  Number("99999999999999999999"), // overflows 2^53
  "",
  "x".repeat(70_000),
  "a\u0000b",
  "\ud800",
  "ö漢字😀",
  [],
  {},
  nested(80),
  { a: nested(70) },
  "*/99999999999999999999 * * * *",
  "+25:00",
];
/**
 * Odd timing settings, each sent over a valid schedule body (so the value itself is judged, not a
 * missing field): each must be a correct schedule or a clean 4xx, never a 5xx and never a hang.
 */
const ODD_SETTINGS: Array<[string, unknown]> = [
  ...["0 0 31 2 *", "0 0 30 2 *", "@reboot", "@every 5m", "* * * * * * *", "", "0 0 * * 8", "60 * * * *"].map(
    (v) => ["cron", v] as [string, unknown],
  ),
  ...["0 0 LW * *", "0 0 ? * 5#5", "0 0 ? * 5#6", "0 0 L-40 * *", "*/0 * * * *", "5-1 * * * *", "0\t0\t*\t*\t*"].map(
    (v) => ["cron", v] as [string, unknown],
  ),
  ...["Etc/GMT+14", "Etc/GMT-14", "Etc/GMT+12", "EST", "utc", "+01:00", "../../etc/passwd", "Europe/Kiev", ""].map(
    (v) => ["timezone", v] as [string, unknown],
  ),
  ...[
    "0s",
    "0",
    "-10s",
    "999ms",
    "1.5s",
    "1e3s",
    "PT1H",
    "100000000d",
    "9007199254740991ms",
    "99999999999999999999d",
  ].map((v) => ["interval", v] as [string, unknown]),
  ...[
    "9999-12-31T23:59:59.999Z",
    "9999-12-30T00:00:00Z",
    "9999-12-31T23:59:59-23:59",
    "10000-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "0000-01-01T00:00:00+23:59",
    "2027-03-28T02:30:00+02:00", // Berlin's spring-forward gap, written with the summer offset
    "2027-03-28T02:30:00", // no offset
    "2026-11-01T01:30:00-04:00", // New York's repeated hour
    "2026-02-30T00:00:00Z",
    "2026-12-01T24:00:00Z",
    "2026-12-01T23:59:60Z",
  ].flatMap((v) => [["start_at", v] as [string, unknown], ["end_at", v] as [string, unknown]]),
  ["jitter", "0s"],
  ["jitter", "1d1ms"],
  ["catchup_window", "9s"],
  ["catchup_window", "366d"],
  ["dst", "skip:skip"],
  ["dst", "SHIFT:FIRST"],
  ["max_catch_up", 0],
  ["max_catch_up", 1001],
];

/** Headers a client may send wrongly, on every write. */
const ODD_HEADERS: Array<Record<string, string>> = [
  { "if-match": "garbage" },
  { "if-match": '"-1"' },
  { "if-match": '"99999999999999999999"' },
  { "if-match": '"1", "2"' },
  { "if-match": 'W/"1"' },
  { "idempotency-key": "x".repeat(10_000) },
  { "idempotency-key": "é" },
  { "content-type": "text/plain" },
  { "content-type": "application/json-seq" },
  { "content-type": "multipart/form-data; boundary=x" },
  { authorization: `Bearer ${"x".repeat(10_000)}` },
  { "x-request-id": "x".repeat(5_000) },
];

/** Query strings on every read. */
const ODD_QUERIES = [
  "limit=0",
  "limit=1001",
  "limit=1&limit=2",
  `cursor=${"A".repeat(5_000)}`,
  "cursor=..%2F..",
  "state[]=a",
  "__proto__[x]=1",
  "constructor=1",
  `q=${encodeURIComponent("' OR 1=1 --")}`,
  `workflow=${"x".repeat(10_000)}`,
];

/** Ids in paths: unicode, encoded separators, over-long, invalid escapes. */
const ODD_IDS = [
  "%C3%A4",
  "%F0%9F%98%80",
  "a%2Fb",
  "..%2F..%2Fetc",
  "%20",
  "%25",
  "%ZZ",
  "x".repeat(5_000),
  "__proto__",
];

const MALFORMED = ["{", '{"a":}', "[1,]", "nul", '{"a":"\\x"}', `${"[".repeat(5000)}`];

interface Op {
  method: string;
  path: string;
  fields: string[];
}

const schema = `orbit_fuzz_${randomBytes(5).toString("hex")}`;
for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`fuzz from the OpenAPI document (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      if (dialect === "postgres") await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer(dialect === "postgres" ? { database: PG_URL!, databaseSchema: schema } : {});
      await t.registerOrders();
      await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
      await t.call("POST", "/v1/executions", { execution_id: "e-1", workflow: "OrderProcessing", input: ORDER_INPUT });
    });
    afterAll(async () => {
      await t.stop();
      if (dialect === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    });

    const stored = async () =>
      (await t.call("GET", "/v1/schedules?limit=1000")).body.schedules.length +
      (await t.call("GET", "/v1/executions?limit=1000")).body.executions.length +
      (await t.call("GET", "/v1/workflows")).body.workflows.length;

    it("never answers 5xx, always {code, message}, and a refusal stores nothing", async () => {
      const doc = (await t.call("GET", "/v1/openapi.json")).body;
      const ops: Op[] = [];
      for (const [path, item] of Object.entries(
        doc.paths as Record<
          string,
          Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: object } }> } }>
        >,
      )) {
        for (const [method, op] of Object.entries(item)) {
          const body = op.requestBody?.content?.["application/json"]?.schema;
          const concrete = path.replace(/\{[^}]+\}/g, (p) =>
            p === "{id}" && path.startsWith("/v1/executions") ? "e-1" : p === "{id}" ? "orders-every-10s" : "x",
          );
          ops.push({ method: method.toUpperCase(), path: concrete, fields: Object.keys(body?.properties ?? {}) });
        }
      }
      expect(ops.length).toBeGreaterThan(20);
      const before = await stored();
      let requests = 0;
      let ok = 0;
      const fives: string[] = [];
      const check = async (method: string, path: string, body?: unknown) => {
        const r = await t.call(method, path, body);
        requests++;
        if (r.status >= 500) fives.push(`${method} ${path} ${r.status} ${r.text.slice(0, 200)}`);
        else if (r.status >= 400) expect(Object.keys(r.body ?? {})).toEqual(["code", "message"]);
        else ok++;
      };
      for (let round = 0; round < ROUNDS; round++) {
        for (const op of ops) {
          if (op.method === "GET" || op.path.includes("/worker/poll")) {
            for (const v of ["%00", "%ED%A0%80", "-1", "99999999999999999999", "%F0%9F%98%80"]) {
              if (op.method === "GET") await check("GET", `${op.path}?limit=${v}&cursor=${v}&workflow=${v}`);
            }
            if (op.method === "GET") continue;
          }
          if (op.path.endsWith("/openapi.json")) continue;
          for (const text of MALFORMED) await check(op.method, op.path, text);
          for (const field of op.fields) {
            for (const value of HOSTILE) await check(op.method, op.path, { [field]: value });
          }
        }
      }
      const after = await stored();
      expect(fives).toEqual([]);
      expect(after - before).toBeLessThanOrEqual(ok);
      console.log(`fuzz ${dialect}: ${ops.length} operations, ${requests} requests, 5xx: ${fives.length}`);
    }, 600_000);

    /** Every RFC 3339 time of a schedule answer is writable (four-digit year) and in order. */
    const expectSaneTimes = (body: { next_fire_at: string | null; next_fire_times: string[]; state: string }) => {
      const times = body.next_fire_times;
      for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
      const ms = times.map((time) => Date.parse(time));
      expect(ms).toEqual([...ms].sort((a, b) => a - b));
      expect(new Set(ms).size).toBe(ms.length);
      expect(body.next_fire_at === null).toBe(body.state !== "active" || times.length === 0);
    };

    it("odd timing settings over a valid body: a sane schedule or a clean 4xx that changes nothing", async () => {
      const seedBefore = (await t.call("GET", "/v1/schedules/orders-every-10s")).body;
      let n = 0;
      let created = 0;
      for (const [field, value] of ODD_SETTINGS) {
        const id = `odd-${n++}`;
        const timed = ["cron", "timezone", "dst"].includes(field)
          ? { cron: "30 2 * * *", timezone: "Europe/Berlin" }
          : { interval: "1h" };
        const body = {
          schedule_id: id,
          workflow: "OrderProcessing",
          input: ORDER_INPUT,
          ...timed,
          ...(field === "max_catch_up" ? { catchup: "catch_up" } : {}),
          [field]: value,
        };
        const what = `${field}=${JSON.stringify(value)}`;
        const r = await t.call("POST", "/v1/schedules", body);
        expect(r.status, `${what}: ${r.text}`).toBeLessThan(500);
        if (r.status >= 400) {
          expect(Object.keys(r.body), what).toEqual(["code", "message"]);
          expect((await t.call("GET", `/v1/schedules/${id}`)).status, what).toBe(404);
        } else {
          created++;
          expectSaneTimes(r.body);
          expect((await t.call("DELETE", `/v1/schedules/${id}`)).status, what).toBe(204);
        }
        // The same value as a change of the seed's schedule: refused without a trace, or sane.
        const patch = field === "interval" || field === "start_at" || field === "end_at" ? { [field]: value } : null;
        if (patch !== null) {
          const p = await t.call("PATCH", "/v1/schedules/orders-every-10s", patch);
          expect(p.status, `PATCH ${what}: ${p.text}`).toBeLessThan(500);
          if (p.status >= 400) {
            expect(Object.keys(p.body), what).toEqual(["code", "message"]);
          } else {
            expectSaneTimes(p.body);
            await t.call("PATCH", "/v1/schedules/orders-every-10s", {
              interval: "10s",
              start_at: null,
              end_at: null,
            });
          }
        }
      }
      expect(created).toBeGreaterThan(5);
      const seedAfter = (await t.call("GET", "/v1/schedules/orders-every-10s")).body;
      expect(seedAfter.next_fire_times).toEqual(seedBefore.next_fire_times);
      expect({ ...seedAfter, revision: 0, updated_at: "" }).toMatchObject({
        ...seedBefore,
        revision: 0,
        updated_at: "",
      });
    }, 120_000);

    it("odd headers, query strings and path ids: never 5xx, refusals change nothing", async () => {
      const fives: string[] = [];
      const shape = (label: string, r: { status: number; text: string; body: unknown }) => {
        if (r.status >= 500) fives.push(`${label} ${r.status} ${r.text.slice(0, 200)}`);
        else if (r.status >= 400) expect(Object.keys(r.body ?? {}), label).toEqual(["code", "message"]);
      };
      const before = await stored();
      const rev = async () => (await t.call("GET", "/v1/schedules/orders-every-10s")).body.revision as number;
      for (const headers of ODD_HEADERS) {
        const label = JSON.stringify(headers).slice(0, 80);
        const revision = await rev();
        const p = await t.call("PATCH", "/v1/schedules/orders-every-10s", { description: "odd header" }, headers);
        shape(`PATCH ${label}`, p);
        if (p.status >= 400) expect(await rev(), label).toBe(revision);
        shape(
          `POST create ${label}`,
          await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "hdr" }, headers),
        );
        await t.call("DELETE", "/v1/schedules/hdr");
        shape(
          `POST start ${label}`,
          await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: ORDER_INPUT }, headers),
        );
      }
      for (const q of ODD_QUERIES) {
        for (const path of [
          "/v1/schedules",
          "/v1/executions",
          "/v1/workflows",
          "/v1/schedules/orders-every-10s/occurrences",
        ]) {
          shape(`GET ${path}?${q.slice(0, 40)}`, await t.call("GET", `${path}?${q}`));
        }
      }
      for (const id of ODD_IDS) {
        for (const [method, suffix, body] of [
          ["GET", "", undefined],
          ["PATCH", "", { description: "x" }],
          ["DELETE", "", undefined],
          ["POST", "/pause", {}],
          ["POST", "/trigger", {}],
          ["POST", "/backfill", { start_at: "2026-11-01T00:00:00Z", end_at: "2026-11-01T01:00:00Z" }],
          ["GET", "/occurrences", undefined],
        ] as const) {
          shape(
            `${method} /v1/schedules/${id.slice(0, 20)}${suffix}`,
            await t.call(method, `/v1/schedules/${id}${suffix}`, body),
          );
        }
        shape(`GET /v1/executions/${id.slice(0, 20)}`, await t.call("GET", `/v1/executions/${id}`));
        shape(`GET /v1/workflows/${id.slice(0, 20)}`, await t.call("GET", `/v1/workflows/${id}`));
      }
      expect(fives).toEqual([]);
      // Header cases may start executions (their header was harmless); nothing else was stored.
      expect(await stored()).toBeLessThanOrEqual(before + ODD_HEADERS.length);
    }, 120_000);
  });
}
