/**
 * `orbit ps` reads the executions list's summary view for its table (docs/cli.md, docs/api.md §
 * Executions): the table shows no input or result, and a page of 50 executions with 900 KB
 * results was a 43 MB answer. `--json` asks as before and prints the executions whole; a server
 * before the view refuses the parameter, and ps then lists in full from it.
 */
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { everyTenSeconds, PS_NOW } from "./fixtures/api.js";

const summaries = everyTenSeconds.map(({ input: _input, result: _result, ...rest }) => rest);

it("asks for the summary view for the table and prints it as before", async () => {
  const server = new FakeServer(() => ({ status: 200, body: { executions: summaries, next_cursor: null } }));
  const r = await server.run(["ps", "--schedule", "orders-every-10s"], { now: PS_NOW });
  expect(r.code).toBe(0);
  expect(server.requests.map((q) => q.path)).toEqual([
    "/v1/executions?schedule_id=orders-every-10s&limit=50&view=summary",
  ]);
  const full = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: null } }));
  expect(r.stdout).toBe((await full.run(["ps", "--schedule", "orders-every-10s"], { now: PS_NOW })).stdout);
  expect(r.stdout.split("\n")[1]).toBe(
    "orders-every-10s:2026-11-15T18:51:30Z  OrderProcessing          1.0.0      COMPLETED     259ms",
  );
});

it("--json asks for and prints the executions whole, input and result included", async () => {
  const server = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: null } }));
  const r = await server.run(["ps", "--json", "--limit", "3"]);
  expect(r.code).toBe(0);
  expect(server.requests.map((q) => q.path)).toEqual(["/v1/executions?limit=3"]);
  expect(JSON.parse(r.stdout)).toEqual({ executions: everyTenSeconds, next_cursor: null });
});

it("lists in full from a server that does not know the view", async () => {
  const older = new FakeServer((req) =>
    req.path.includes("view=")
      ? {
          status: 400,
          body: {
            code: "INVALID_ARGUMENT",
            message: 'unknown field "view" in the query string (known: workflow, status, schedule_id, cursor, limit)',
          },
        }
      : { status: 200, body: { executions: everyTenSeconds, next_cursor: null } },
  );
  const r = await older.run(["ps"], { now: PS_NOW });
  expect(r.code).toBe(0);
  expect(r.stderr).toBe("");
  expect(older.requests.map((q) => q.path)).toEqual([
    "/v1/executions?limit=50&view=summary",
    "/v1/executions?limit=50",
  ]);
  expect(r.stdout.split("\n")[1]).toContain("orders-every-10s:2026-11-15T18:51:30Z");
});
