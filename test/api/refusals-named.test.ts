/**
 * Refusals that say where and what (docs/errors.md): a NUL or lone surrogate names the JSON path of
 * its string, a workflow name that cannot be one is not told to register it, a create without
 * `schedule_id` says so as other bodies do, and a body in another charset than UTF-8 is refused
 * rather than read as UTF-8.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.ok("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
});
afterAll(() => t?.stop());

const SURROGATE = "contains a lone UTF-16 surrogate (e.g. \\ud800 without its pair), which is not valid Unicode";
const NUL = "contains a NUL character (\\u0000), which Orbit does not store";

describe("a NUL or lone surrogate in a body", () => {
  const schedule = (i: number) => ({ schedule_id: `b${i}`, workflow: "W", cron: "0 3 * * *" });

  it("names the path of its string, as the body's other refusals name a field", async () => {
    const batch = [0, 1, 2, 3, 4].map(schedule);
    batch[3] = { ...schedule(3), description: "bad \ud800" } as (typeof batch)[number];
    for (const [path, body, where] of [
      [
        "/v1/schedules/batch",
        { schedules: batch },
        `the string at schedules[3].description in the request body ${SURROGATE}`,
      ],
      [
        "/v1/executions",
        { workflow: "W", input: { items: [{ sku: "a" }, { sku: "b\u0000" }] } },
        `the string at input.items[1].sku in the request body ${NUL}`,
      ],
      // A key with an escape in the path is shown decoded.
      [
        "/v1/executions",
        '{"workflow":"W","input":{"caf\\u00e9":[1,"\\udc00"]}}',
        `the string at input.café[1] in the request body ${SURROGATE}`,
      ],
      [
        "/v1/executions",
        { workflow: "W", input: { a: { "k\ud800": 1 } } },
        `a key of the object at input.a in the request body ${SURROGATE}`,
      ],
      ["/v1/executions", { "\u0000": 1 }, `a key of the request body ${NUL}`],
      ["/v1/schedules/b9/pause", { note: "\udfff" }, `the string at note in the request body ${SURROGATE}`],
    ] as const) {
      const r = await t.call("POST", path, body);
      expect([path, r.status, r.body]).toEqual([path, 400, { code: "INVALID_ARGUMENT", message: where }]);
    }
    expect((await t.call("GET", "/v1/schedules")).body.schedules).toEqual([]);
  });
});

describe("GET /v1/workflows/{name} of a name no workflow can have", () => {
  it("is 404 saying so, without a register command that would be refused", async () => {
    for (const [encoded, name] of [
      ["%3Cscript%3E", "<script>"],
      ["a%20b", "a b"],
      ["a%2Fb", "a/b"],
      ["-x", "-x"],
    ]) {
      for (const path of [`/v1/workflows/${encoded}`, `/v1/workflows/${encoded}/settings`]) {
        const r = await t.call("GET", path);
        expect([path, r.status, r.body]).toEqual([
          path,
          404,
          {
            code: "NOT_FOUND",
            message: `no workflow is named ${JSON.stringify(name)}: it is not a valid workflow name (1-128 letters, digits, '_', '.' or '-', starting with a letter or digit)`,
          },
        ]);
      }
    }
    // A name that could be registered keeps the hint; so does Name@version, which says to give them apart.
    const unknown = await t.call("GET", "/v1/workflows/Nope");
    expect([unknown.status, unknown.body.message]).toEqual([
      404,
      expect.stringContaining("orbit workflow register Nope@<version>"),
    ]);
    const joined = await t.call("GET", "/v1/workflows/W@1.0.0");
    expect([joined.status, joined.body.message]).toEqual([
      404,
      expect.stringContaining("give the name and the version apart"),
    ]);
  });
});

describe("POST /v1/schedules without schedule_id", () => {
  it('says the request body needs "schedule_id", as other bodies say a missing field', async () => {
    for (const body of [undefined, {}, { workflow: "W", cron: "0 3 * * *" }]) {
      const r = await t.call("POST", "/v1/schedules", body);
      expect([body, r.status, r.body]).toEqual([
        body,
        400,
        { code: "INVALID_ARGUMENT", message: 'the request body needs "schedule_id"' },
      ]);
    }
    // A misspelt key is still named, with its suggestion.
    const misspelt = await t.call("POST", "/v1/schedules", { id: "x", workflow: "W", cron: "0 3 * * *" });
    expect([misspelt.status, misspelt.body.message]).toEqual([
      400,
      expect.stringContaining('did you mean "schedule_id"'),
    ]);
  });
});

describe("a charset other than UTF-8", () => {
  it("is refused; utf-8 in any case, quoted or not, is read", async () => {
    const body = JSON.stringify({ schedule_id: "c", workflow: "W", cron: "0 3 * * *" });
    for (const charset of ["utf-16", "UTF-16LE", '"latin1"', "iso-8859-1"]) {
      const r = await t.call("POST", "/v1/schedules", body, { "content-type": `application/json; charset=${charset}` });
      const named = charset.replaceAll('"', "").toLowerCase();
      expect([charset, r.status, r.body]).toEqual([
        charset,
        400,
        {
          code: "INVALID_ARGUMENT",
          message: `the request body must be UTF-8 (content-type: application/json; charset=utf-8), not charset "${named}"`,
        },
      ]);
    }
    expect((await t.call("GET", "/v1/schedules/c")).status).toBe(404);
    for (const [i, charset] of ["utf-8", "UTF-8", '"utf-8"', "utf8"].entries()) {
      const r = await t.call("POST", "/v1/schedules", body.replace('"c"', `"c${i}"`), {
        "content-type": `application/json;charset=${charset}`,
      });
      expect([charset, r.status]).toEqual([charset, 201]);
    }
  });
});
