/**
 * Hostile bodies and strings (docs/security.md § Limits), on both dialects: the caller is known
 * before its body is read, deep nesting is refused while scanning, NUL and lone surrogates are
 * refused with the same 400 everywhere, and worker results obey the inputs' limits.
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { ORDER_INPUT, startTestServer, type TestServer } from "./helpers.js";

const schema = `orbit_hostile_${randomBytes(5).toString("hex")}`;
const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
const nested = (n: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
};

for (const dialect of ["sqlite", "postgres"] as const) {
  describe.skipIf(dialect === "postgres" && !PG_URL)(`hostile input (${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      if (dialect === "postgres") await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer(dialect === "postgres" ? { database: PG_URL!, databaseSchema: schema } : {});
      await t.registerOrders();
      await t.call("POST", "/v1/schedules", {
        schedule_id: "s",
        workflow: "OrderProcessing",
        interval: "1h",
        input: ORDER_INPUT,
      });
    });
    afterAll(async () => {
      await t.stop();
      if (dialect === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    });

    it("refuses a body nested a million deep with a 400, also with an Idempotency-Key or as trigger input", async () => {
      const million = deep(1_000_000);
      for (const [path, headers] of [
        ["/v1/executions", {}],
        ["/v1/executions", { "idempotency-key": "deep-1" }],
        ["/v1/schedules/s/trigger", {}],
      ] as const) {
        const r = await t.call("POST", path, million, headers);
        expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 400, code: "INVALID_ARGUMENT" });
        expect(r.body.message).toMatch(/nests deeper than 72 levels/);
      }
      const text = `{"workflow": "OrderProcessing", "input": {"x": ${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}}`;
      const r = await t.call("POST", "/v1/executions", text, { "idempotency-key": "deep-2" });
      expect(r.status).toBe(400);
      // Within the body's scan limit, the input's own 64 levels are checked with a path.
      const r65 = await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: { x: nested(65) } });
      expect(r65.status).toBe(400);
      expect(r65.body.message).toMatch(/nests deeper than 64 levels/);
    });

    it("refuses NUL and lone surrogates in ids, bodies, keys and queries with the same 400, storing nothing", async () => {
      const bad = ["a\u0000b", "a\ud800b", "a\udc00", "\ud83d"];
      for (const s of bad) {
        const answers = [
          await t.call("POST", "/v1/schedules", {
            schedule_id: s,
            workflow: "OrderProcessing",
            interval: "1h",
            input: ORDER_INPUT,
          }),
          await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: { ...ORDER_INPUT, note: s } }),
          await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: { ...ORDER_INPUT, [s]: 1 } }),
          await t.call("POST", "/v1/schedules/s/pause", { note: s }),
          await t.call("GET", `/v1/schedules/${encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))}%00`),
          await t.call("GET", "/v1/executions?workflow=%00"),
        ];
        for (const a of answers) {
          expect({ s: JSON.stringify(s), status: a.status, code: a.body.code }).toEqual({
            s: JSON.stringify(s),
            status: 400,
            code: "INVALID_ARGUMENT",
          });
        }
      }
      // Control characters in an execution id: C0, DEL and C1 (U+0085 and U+009B passed).
      for (const id of ["a\tb", "a\u007fb", "a\u0085b", "a\u009b31m"]) {
        const r = await t.call("POST", "/v1/executions", {
          execution_id: id,
          workflow: "OrderProcessing",
          input: ORDER_INPUT,
        });
        expect({ id: JSON.stringify(id), status: r.status, message: r.body.message }).toEqual({
          id: JSON.stringify(id),
          status: 400,
          message: expect.stringContaining("without control characters"),
        });
      }
      // A correctly paired surrogate (an emoji) is fine, in an id and in a value.
      const emoji = await t.call("POST", "/v1/executions", {
        execution_id: "smile-\ud83d\ude00",
        workflow: "OrderProcessing",
        input: { ...ORDER_INPUT, note: "\ud83d\ude00" },
      });
      expect(emoji.status).toBe(201);
      expect((await t.call("GET", `/v1/executions/${encodeURIComponent("smile-\ud83d\ude00")}`)).status).toBe(200);
      expect((await t.call("GET", "/v1/schedules/s")).body.paused).toBe(false);
      const list = await t.call("GET", "/v1/executions?limit=1000");
      expect(list.body.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual(["smile-😀"]);
    });

    it("fails the attempt of a worker result over the limits instead of leaving it RUNNING", async () => {
      const poll = {
        worker_id: "w",
        workflows: [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }],
        wait_ms: 0,
        max_tasks: 100,
      };
      for (const [id, result, why] of [
        ["deep-result", nested(66), /result nests deeper than 64 levels/],
        ["big-result", { blob: "x".repeat(1_100_000) }, /result is 1,100,011 bytes serialized; the limit is 1,048,576/],
      ] as const) {
        await t.call("POST", "/v1/executions", { execution_id: id, workflow: "OrderProcessing", input: ORDER_INPUT });
        const leased = await t.call("POST", "/v1/worker/poll", poll);
        const task = leased.body.tasks.find((k: { execution_id: string }) => k.execution_id === id);
        const r = await t.call("POST", `/v1/worker/tasks/${task.task_id}/complete`, { worker_id: "w", result });
        expect(r.status).toBe(400);
        expect(r.body.message).toMatch(why);
        const e = await t.call("GET", `/v1/executions/${id}`);
        expect(e.body.status).toBe("FAILED");
        expect(JSON.stringify(e.body.error)).toMatch(why);
      }
    });

    it("refuses a __proto__ key by name, not as invalid JSON, storing nothing", async () => {
      // The body is valid JSON; "not valid JSON" sent users looking for a syntax error that was not there.
      const message =
        'the request body has a "__proto__" key (or "constructor" holding "prototype"), which Orbit refuses: rename it';
      for (const input of ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
        const r = await t.call(
          "POST",
          "/v1/schedules",
          `{"schedule_id":"proto","workflow":"OrderProcessing","interval":"1h","input":${input}}`,
        );
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ code: "INVALID_ARGUMENT", message });
      }
      expect((await t.call("GET", "/v1/schedules/proto")).status).toBe(404);
      expect((await t.call("POST", "/v1/schedules", '{"schedule_id":')).body).toEqual({
        code: "INVALID_ARGUMENT",
        message: "the request body is not valid JSON",
      });
    });

    it("refuses a key given twice in one object, at any depth and however it is escaped, storing nothing", async () => {
      // JSON.parse keeps the last: `"paused": true, "paused": false` created a schedule that fires (a tester's fuzz).
      const twice = (key: string) => ({
        code: "INVALID_ARGUMENT",
        message: `the request body gives the key "${key}" twice in one object; give each key once`,
      });
      const cases: [string, string][] = [
        ['{"schedule_id":"dup","workflow":"OrderProcessing","interval":"1h","paused":true,"paused":false}', "paused"],
        ['{"schedule_id":"dup","schedule_id":"dup-b","workflow":"OrderProcessing","interval":"1h"}', "schedule_id"],
        ['{"schedule_id":"dup","workflow":"OrderProcessing","interval":"1h","input":{"a":[{"x":1,"\\u0078":2}]}}', "x"],
      ];
      for (const [body, key] of cases) {
        const r = await t.call("POST", "/v1/schedules", body);
        expect([r.status, r.body]).toEqual([400, twice(key)]);
      }
      expect((await t.call("GET", "/v1/schedules/dup")).status).toBe(404);
      expect((await t.call("GET", "/v1/schedules/dup-b")).status).toBe(404);
      // The same key in sibling objects, and a key's name as a value, are not repeats.
      const ok = await t.call(
        "POST",
        "/v1/schedules",
        '{"schedule_id":"dup","workflow":"OrderProcessing","interval":"1h","input":{"a":{"k":"k"},"b":{"k":["k",{"k":1}]}}}',
      );
      expect(ok.status).toBe(201);
      expect(ok.body.input).toEqual({ a: { k: "k" }, b: { k: ["k", { k: 1 }] } });
      const poll = await t.call("POST", "/v1/worker/poll", '{"worker_id":"w","worker_id":"v","workflows":[]}');
      expect([poll.status, poll.body]).toEqual([400, twice("worker_id")]);
    });

    it("refuses a compressed body by name instead of as invalid JSON, storing nothing", async () => {
      const body = JSON.stringify({ schedule_id: "enc", workflow: "OrderProcessing", interval: "1h" });
      const post = (headers: Record<string, string>, data: Uint8Array | string) =>
        fetch(`${t.server.url}/v1/schedules`, { method: "POST", headers, body: data });
      const gzip = await post({ "content-type": "application/json", "content-encoding": "gzip" }, gzipSync(body));
      expect({ status: gzip.status, body: await gzip.json() }).toEqual({
        status: 400,
        body: {
          code: "INVALID_ARGUMENT",
          message: "the request body is compressed (content-encoding: gzip); send it uncompressed",
        },
      });
      expect((await t.call("GET", "/v1/schedules/enc")).status).toBe(404);
      // An explicit identity encoding is no encoding.
      const plain = await post({ "content-type": "application/json", "content-encoding": "Identity" }, body);
      expect(plain.status).toBe(201);
    });

    it("refuses a transfer coding besides chunked (gzip, chunked) instead of carrying out the de-chunked body", async () => {
      // A plain JSON body sent so was carried out (201), a gzipped one failed as not UTF-8 (a tester).
      const { port } = new URL(t.server.url);
      const body = JSON.stringify({ schedule_id: "te-gzip", workflow: "OrderProcessing", interval: "1h" });
      const socket = connect(Number(port), "127.0.0.1");
      let answer = "";
      socket.on("data", (chunk: Buffer) => {
        answer += chunk.toString();
      });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.write(
        `POST /v1/schedules HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain(
        '{"code":"INVALID_ARGUMENT","message":"the request body has a transfer coding Orbit does not decode (transfer-encoding: gzip, chunked); send it with chunked alone, or with a content-length"}',
      );
      expect((await t.call("GET", "/v1/schedules/te-gzip")).status).toBe(404);
    });

    it("answers fastify's own refusals in the {code, message} shape, naming the problem without echoing the URL", async () => {
      const long = await fetch(`${t.server.url}/v1/schedules/${"x".repeat(100_000)}`);
      expect(long.status).toBeGreaterThanOrEqual(400);
      expect(long.status).toBeLessThan(500);
      expect(Object.keys((await long.json()) as object)).toEqual(["code", "message"]);
      // Long enough for the router's limit, short enough for the headers' 16 KB.
      const segment = await fetch(`${t.server.url}/v1/schedules/${"x".repeat(9_000)}`);
      expect({ status: segment.status, body: await segment.json() }).toEqual({
        status: 400,
        body: {
          code: "INVALID_ARGUMENT",
          message: "a path segment of the URL is longer than 2048 characters; ids are at most 255",
        },
      });
      for (const path of ["/v1/schedules/%ED%A0%80", "/v1/executions/%E0%A4%A", "/v1/schedules/%zz"]) {
        const badUrl = await fetch(`${t.server.url}${path}`);
        expect({ path, status: badUrl.status, body: await badUrl.json() }).toEqual({
          path,
          status: 400,
          body: {
            code: "INVALID_ARGUMENT",
            message: expect.stringMatching(/^the URL path is not valid percent-encoded/),
          },
        });
      }
    });
  });
}
