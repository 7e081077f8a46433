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
  });
}
