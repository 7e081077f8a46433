/**
 * A server that answers a page cursor it gave before: followed, the listing never ended (`schedule
 * list` against `{"schedules":[],"next_cursor":"c"}` looped until killed; a tester). Each listing
 * stops at the repeat with exit 1 and one line.
 */
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const repeating = new FakeServer((r) => {
  if (r.path.startsWith("/v1/schedules/s/occurrences"))
    return { status: 200, body: { occurrences: [], next_cursor: "c" } };
  if (r.path.startsWith("/v1/schedules")) return { status: 200, body: { schedules: [], next_cursor: "c" } };
  if (r.path.startsWith("/v1/executions")) return { status: 200, body: { executions: [], next_cursor: "c" } };
  return undefined;
});

const said =
  'orbit: the server answered the same page cursor twice ("c"): following it would never end, so the listing stopped\n';

it.each([
  ["schedule", "list"],
  ["ps", "--all"],
  ["schedule", "occurrences", "s"],
])("orbit %s %s stops when the server repeats a cursor", async (...argv: string[]) => {
  const r = await repeating.run(argv);
  expect([r.code, r.stdout, r.stderr]).toEqual([1, "", said]);
});

/** Empty pages, each with a cursor never given before: followed forever too (a tester). */
function growing(): FakeServer {
  let n = 0;
  const next = () => `c${n++}`;
  return new FakeServer((r) => {
    if (r.path.startsWith("/v1/schedules/s/occurrences"))
      return { status: 200, body: { occurrences: [], next_cursor: next() } };
    if (r.path.startsWith("/v1/schedules")) return { status: 200, body: { schedules: [], next_cursor: next() } };
    if (r.path.startsWith("/v1/executions")) return { status: 200, body: { executions: [], next_cursor: next() } };
    return undefined;
  });
}

it.each([
  ["schedule", "list"],
  ["ps", "--all"],
  ["schedule", "occurrences", "s"],
])("orbit %s %s stops after 100 empty pages with ever-new cursors", async (...argv: string[]) => {
  const server = growing();
  const r = await server.run(argv);
  expect([r.code, r.stdout, r.stderr]).toEqual([
    1,
    "",
    "orbit: the server answered 100 empty pages in a row, each with a next cursor: following them might never end, so the listing stopped\n",
  ]);
  expect(server.requests).toHaveLength(100);
});
