/**
 * A flag that takes one value, given twice, is bad usage (exit 2): commander kept the last, so
 * `--cron "0 25 * * *" --cron "0 2 * * *"` created a schedule with the second and said nothing of
 * the first (a tester). Flags that collect (`--label`, `--selector`, `--unset`) still repeat.
 */
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

/** A server that takes every create, and records what it was sent. */
const fresh = (): FakeServer =>
  new FakeServer((r) =>
    r.method === "POST" ? { status: 201, body: { ...(r.body as object), schedule_id: "d" } } : undefined,
  );

it.each([
  [["schedule", "create", "d", "--workflow", "W", "--cron", "0 25 * * *", "--cron", "0 2 * * *"], "--cron"],
  [["schedule", "create", "d", "--workflow", "W", "--workflow", "V", "--interval", "1s"], "--workflow"],
  [["schedule", "create", "d", "--workflow", "W", "--interval", "1s", "--input", "{}", "--input={}"], "--input"],
  [["schedule", "list", "--limit", "1", "--limit", "2"], "--limit"],
  [["start", "W", "--id", "a", "--id", "b"], "--id"],
  [["schedule", "preview", "--cron", "0 2 * * *", "--dst", "once", "--dst", "skip"], "--dst"],
  // A --port out of range after them: without the refusal the command stops there, not starting a server.
  [["server", "--data-dir", "a", "--data-dir", "b", "--port", "70000"], "--data-dir"],
  [["ps", "--server", "http://a:1", "--server", "http://b:1"], "--server"],
])("%j is refused", async (argv, flag) => {
  const server = fresh();
  const r = await server.run(argv);
  expect([r.code, r.stderr]).toEqual([2, `orbit: ${flag} is given twice; give it once.\n(add --help for usage)\n`]);
  expect(server.requests).toEqual([]);
});

it("flags that collect, and flags without a value, may repeat", async () => {
  const server = fresh();
  const r = await server.run([
    "schedule",
    "create",
    "d",
    "--workflow",
    "W",
    "--interval",
    "1s",
    "--label",
    "a=1",
    "--label",
    "b=2",
    "--json",
    "--json",
  ]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(server.requests[0]?.body).toMatchObject({ labels: { a: "1", b: "2" } });
});
