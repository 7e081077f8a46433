/**
 * `GET /v1/preview` and `orbit schedule preview` are one timing code (docs/api.md § Identity and
 * preview, docs/cli.md): they answer the same for the same timing and `from`. Two ways they did not
 * (a tester's report, 2026-12-05): the route checked "never fires in the next five years" from the
 * server's clock instead of from `from`, so it refused `0 1 *\/14 feb SUN` from 1996 (which fires in
 * 1998) and listed `0 0 29 2 *` from 2096 (whose next fire, 2104, is eight years on); and a misspelt
 * `dst` lost the "did you mean" that a create gives (`wall_clok`).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../cli/run-cli.js";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

/** Both previews of one timing: the route's answer and the CLI's, side by side. */
async function both(
  q: { cron: string; from?: string; dst?: string },
  count = 2,
): Promise<{ route: unknown; cli: unknown }> {
  const params = new URLSearchParams({ cron: q.cron, count: String(count) });
  if (q.from !== undefined) params.set("from", q.from);
  if (q.dst !== undefined) params.set("dst", q.dst);
  const r = await t.call("GET", `/v1/preview?${params}`);
  const route = r.status === 200 ? r.body.next_fire_times : { status: r.status, message: r.body.message };
  const argv = ["schedule", "preview", "--cron", q.cron, "--count", String(count), "--json"];
  if (q.from !== undefined) argv.push("--from", q.from);
  if (q.dst !== undefined) argv.push("--dst", q.dst);
  const c = await runCli(argv);
  const cli = c.code === 0 ? JSON.parse(c.stdout).next_fire_times : { status: 400, message: c.stderr };
  return { route, cli };
}

it("checks 'never fires in the next five years' from `from`, as the CLI does", async () => {
  const fires = await both({ cron: "0 1 */14 feb SUN", from: "1996-10-04T19:33:36Z" });
  expect(fires.route).toEqual(["1998-02-01T01:00:00Z", "1998-02-15T01:00:00Z"]);
  expect(fires.cli).toEqual(fires.route);

  // From 2096 the next 29 February is in 2104 (2100 is not a leap year): more than five years on.
  const never = await both({ cron: "0 0 29 2 *", from: "2096-03-01T00:00:00Z" });
  expect(never.route).toMatchObject({ status: 400, message: expect.stringContaining("five years") });
  expect(never.cli).toMatchObject({ message: expect.stringContaining("five years") });
});

it("gives a misspelt dst its nearest mode, as a create does", async () => {
  const hint = '; did you mean "wall_clock"?';
  const p = await both({ cron: "0 0 * * *", dst: "wall_clok" });
  expect(p.route).toMatchObject({ status: 400, message: expect.stringMatching(/^dst "wall_clok" is not a DST mode/) });
  expect((p.route as { message: string }).message.endsWith(hint)).toBe(true);
  expect((p.cli as { message: string }).message).toContain(`dst "wall_clok" is not a DST mode`);
  expect((p.cli as { message: string }).message).toContain(hint);
  const create = await t.call("POST", "/v1/schedules", {
    schedule_id: "d",
    workflow: "W",
    cron: "0 0 * * *",
    dst: "wall_clok",
  });
  expect(create.body.message).toBe((p.route as { message: string }).message);
});

it("describes the bounds, as the CLI's second line does", async () => {
  const bounds = "start_at=2027-03-01T00:00:00Z&end_at=2027-04-01T00:00:00Z&from=2027-01-01T00:00:00Z&count=1";
  const cron = await t.call("GET", `/v1/preview?cron=30+2+*+*+*&timezone=Europe/Berlin&${bounds}`);
  const want = "At 02:30, every day, from start_at 2027-03-01T00:00:00Z, until end_at 2027-04-01T00:00:00Z";
  expect(cron.body.description).toBe(want);
  const c = await runCli(
    ["schedule", "preview", "--cron", "30 2 * * *", "--timezone", "Europe/Berlin", "--count", "1"].concat([
      "--start-at",
      "2027-03-01T00:00:00Z",
      "--end-at",
      "2027-04-01T00:00:00Z",
      "--from",
      "2027-01-01T00:00:00Z",
    ]),
  );
  expect(c.stdout.split("\n")[1]).toBe(want);
  const every = await t.call("GET", `/v1/preview?interval=10s&${bounds}`);
  expect(every.body.description).toBe(
    "Every 10 seconds, aligned to start_at 2027-03-01T00:00:00Z, until end_at 2027-04-01T00:00:00Z",
  );
});

it("refuses a cron or an interval with blanks around it, as a create does", async () => {
  const cron = await t.call("GET", "/v1/preview?cron=%200%209%20*%20*%20*&count=1");
  expect({ status: cron.status, ...cron.body }).toEqual({
    status: 400,
    code: "INVALID_SCHEDULE",
    message: 'cron " 0 9 * * *" has blanks at its start or end; give "0 9 * * *"',
  });
  expect((await t.call("GET", "/v1/preview?interval=10m%20&count=1")).status).toBe(400);
  const c = await runCli(["schedule", "preview", "--cron", " 0 9 * * *", "--count", "1"]);
  expect(c.stderr).toContain('cron " 0 9 * * *" has blanks at its start or end');
});
