/**
 * A page of schedules holds at most PAGE_BYTES of inputs and settings (docs/api.md § Listing and
 * searching schedules): a page of 1,000 schedules with inputs of 1 MB, both allowed, was a 1 GB
 * answer; 100 of them took 41 s to build with /healthz unanswered meanwhile, and the server's memory
 * to 1 GB (a tester). The list and the search page on with their cursors, every schedule once.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { PAGE_BYTES } from "../../src/scheduler/schedule-list.js";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
const INPUT_BYTES = 600_000;
const COUNT = 9;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
  for (let i = 0; i < COUNT; i++) {
    const created = await t.call("POST", "/v1/schedules", {
      schedule_id: `big-${i}`,
      workflow: "OrderProcessing",
      interval: "1h",
      description: `big ${i}`,
      input: { pad: "x".repeat(INPUT_BYTES) },
    });
    expect(created.status).toBe(201);
  }
  // And small ones after them, as most are.
  for (let i = 0; i < 3; i++) {
    const created = await t.call("POST", "/v1/schedules", {
      schedule_id: `small-${i}`,
      workflow: "OrderProcessing",
      interval: "1h",
    });
    expect(created.status).toBe(201);
  }
});
afterAll(async () => {
  await t.stop();
});

/** Every page of `path` (a query string without cursor), as the ids of each. */
async function pages(path: string): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | null = null;
  do {
    const url: string = cursor === null ? path : `${path}&cursor=${encodeURIComponent(cursor)}`;
    const page = await t.call("GET", url);
    expect(page.status).toBe(200);
    const body = page.body as { schedules: { schedule_id: string }[]; next_cursor: string | null };
    out.push(body.schedules.map((s) => s.schedule_id));
    cursor = body.next_cursor;
  } while (cursor !== null);
  return out;
}

it("cuts a page of large inputs at the page's bytes, and pages on to every schedule once", async () => {
  // A row's input is read three times: its column and its settings' two copies.
  const perPage = Math.floor(PAGE_BYTES / (3 * INPUT_BYTES));
  expect(perPage).toBe(6);
  const all = [...Array.from({ length: COUNT }, (_, i) => `big-${i}`), "small-0", "small-1", "small-2"];
  const listed = await pages("/v1/schedules?limit=1000");
  expect(listed.map((p) => p.length)).toEqual([6, 6]);
  expect(listed.flat()).toEqual(all);
  // The search (a sort, a query) the same way, with its total.
  const found = await pages("/v1/schedules?limit=1000&q=big&sort=id&order=desc");
  expect(found.map((p) => p.length)).toEqual([6, 3]);
  expect(found.flat()).toEqual(all.slice(0, COUNT).reverse());
  expect((await t.call("GET", "/v1/schedules?limit=1000&q=big")).body).toMatchObject({ total: COUNT });
  // A limit below the bytes' cut is kept.
  expect((await pages("/v1/schedules?limit=4")).map((p) => p.length)).toEqual([4, 4, 4]);
});
