/**
 * The checks of one request share a budget (docs/security.md § Input schemas): each input has its
 * own (about a second), and a batch, a validate or an apply of many entries draws every check from
 * one of ten (100 entries of one costly pattern, 74 KB, held a server 39 s). RE2 is charged by its
 * program's size, so a pattern of 2,006 instructions costs a check 0.57 of its budget on
 * 3,000 characters here while its test takes microseconds: the figures are charges, not waits.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.ok("POST", "/v1/workflows", {
    name: "Costly",
    version: "1.0.0",
    input_schema: { type: "object", properties: { v: { type: "string", pattern: "^(?:[ab]x+)*c{0,999}$" } } },
  });
});
afterAll(() => t.stop());

const entries = (n: number, prefix: string) =>
  [...Array(n)].map((_, i) => ({
    schedule_id: `${prefix}-${i}`,
    workflow: "Costly",
    interval: "1h",
    input: { v: "ax".repeat(1500) },
  }));

it("a request whose entries' checks pass one request's budget is refused, naming it; fewer entries are checked", async () => {
  for (const path of ["/v1/schedules/validate", "/v1/schedules/batch", "/v1/schedules/apply"]) {
    const many = await t.call("POST", path, { schedules: entries(25, "many") });
    expect([path, many.status, many.body.message], path).toEqual([
      path,
      400,
      expect.stringMatching(
        /^schedules\[1\d\]( \(many-1\d\))?: the inputs of this request take more pattern matching than one request may do \(5,242,880,000 steps, about ten seconds\): Costly@1\.0\.0's input_schema tests pattern .* send fewer entries per request/,
      ),
    ]);
  }
  expect((await t.call("GET", "/v1/schedules")).body.schedules).toEqual([]);
  // Fewer entries fit: each is checked, within its own budget and the request's.
  const few = await t.call("POST", "/v1/schedules/validate", { schedules: entries(15, "few") });
  expect([few.status, few.body.valid]).toEqual([200, 15]);
});

it("an apply registering workflows whose patterns pass five schemas' limit in all is refused before compiling any", async () => {
  // 40 schemas each just under a schema's limit held the server 20 s, a dry run too.
  const pattern = (i: number) => `[${"\\p{L}".repeat(60)}]*x${i}.*`;
  const workflow = (i: number) => ({
    name: `Heavy${i}`,
    version: "1.0.0",
    input_schema: {
      type: "object",
      properties: Object.fromEntries([...Array(6)].map((_, j) => [`p${j}`, { type: "string", pattern: pattern(j) }])),
    },
  });
  const refused = await t.call("POST", "/v1/schedules/apply", {
    schedules: [],
    workflows: [...Array(6)].map((_, i) => workflow(i)),
    dry_run: true,
  });
  expect([refused.status, refused.body.message]).toEqual([
    400,
    expect.stringMatching(
      /^the workflows of this apply have patterns 1\d\d,\d{3} characters long in all .* at most 100,000/,
    ),
  ]);
  const fits = await t.call("POST", "/v1/schedules/apply", { schedules: [], workflows: [workflow(0), workflow(1)] });
  expect(fits.status).toBe(200);
});
