import { describe, expect, it } from "vitest";
import type { ScheduleJson } from "../../src/client/types.js";
import { FakeServer } from "./fake-server.js";
import { hourlyCheck, manualRun, nightlyOrders } from "./fixtures/api.js";

const CRON_ERROR = "cron `0 25 * * *`: `25` is out of range for the hour field (0-23)";

describe("orbit schedule create / get / list", () => {
  it("sends the flags as settings and prints the block", async () => {
    const server = new FakeServer((req) =>
      req.method === "POST" && req.path === "/v1/schedules" ? { status: 201, body: nightlyOrders } : undefined,
    );
    const r = await server.run([
      "schedule",
      "create",
      "nightly-orders",
      "--workflow",
      "OrderProcessing",
      "--cron",
      "0 2 * * *",
      "--timezone",
      "Europe/Berlin",
      "--input",
      '{"order_id": "N-1", "customer_id": "cust-1", "amount": 120.0, "items": [{"sku": "BOOK-1", "quantity": 1}]}',
      "--description",
      "Nightly reconciliation order",
      "--idempotency-key",
      "k1",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe('active nightly-orders  cron "0 2 * * *" Europe/Berlin');
    const [req] = server.requests;
    expect(req?.body).toEqual({
      schedule_id: "nightly-orders",
      workflow: "OrderProcessing",
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
      input: { order_id: "N-1", customer_id: "cust-1", amount: 120, items: [{ sku: "BOOK-1", quantity: 1 }] },
      description: "Nightly reconciliation order",
    });
    expect(req?.headers["idempotency-key"]).toBe("k1");
    expect(req?.headers["content-type"]).toBe("application/json");
  });

  it("notes on stderr a schedule created ended (its end_at past), exit 0", async () => {
    const ended = { ...nightlyOrders, end_at: "2020-01-01T00:00:00Z", state: "ended", next_fire_at: null };
    const server = new FakeServer(() => ({ status: 201, body: ended }));
    const r = await server.run([
      "schedule",
      "create",
      "nightly-orders",
      "--workflow",
      "OrderProcessing",
      "--cron",
      "0 2 * * *",
      "--end-at",
      "2020-01-01T00:00:00Z",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(/^ended nightly-orders /);
    expect(r.stderr).toBe(
      "orbit: note: nightly-orders has no occurrence between now and its end_at, so it is ended and never fires; `orbit schedule backfill` starts past occurrences\n",
    );
  });

  it("notes a schedule created ended with its end_at to come without pointing to backfill (nothing past to start)", async () => {
    // Its only time before end_at in a DST gap: `30 2 * * *` on a spring-forward night under wall_clock.
    const ended = {
      ...nightlyOrders,
      start_at: "2099-03-01T00:00:00Z",
      end_at: "2099-03-14T12:00:00Z",
      state: "ended",
      next_fire_at: null,
    };
    const server = new FakeServer(() => ({ status: 201, body: ended }));
    const r = await server.run(["schedule", "create", "nightly-orders", "--workflow", "W", "--cron", "30 2 * * *"]);
    expect(r.stderr).toBe(
      "orbit: note: nightly-orders has no occurrence between its start_at and its end_at, so it is ended and never fires\n",
    );
  });

  it("refuses with the server's message and exit 1", async () => {
    const server = new FakeServer(() => ({ status: 400, body: { code: "INVALID_SCHEDULE", message: CRON_ERROR } }));
    const r = await server.run(["schedule", "create", "bad", "--workflow", "W", "--cron", "0 25 * * *"]);
    expect(r).toEqual({ code: 1, stdout: "", stderr: `orbit: ${CRON_ERROR}\n` });
  });

  it("sends the token as a bearer token", async () => {
    const server = new FakeServer(() => ({ status: 200, body: nightlyOrders }));
    await server.run(["schedule", "get", "nightly-orders", "--token", "s3cret"]);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer s3cret");
    expect(server.requests[0]?.path).toBe("/v1/schedules/nightly-orders");
  });

  it("prints the server's JSON with --json", async () => {
    const server = new FakeServer(() => ({ status: 200, body: nightlyOrders }));
    const r = await server.run(["schedule", "get", "nightly-orders", "--json"]);
    expect(JSON.parse(r.stdout)).toEqual(nightlyOrders);
    expect(r.stdout.endsWith("}\n")).toBe(true);
  });

  it("says why a last run that has not ended waits, and prints the block when it cannot tell", async () => {
    const lastRun = "nightly-orders:2026-11-16T01:00:00Z";
    const schedule = { ...nightlyOrders, last_execution_id: lastRun, fired: 1, skipped: 3 };
    const waiting = "no worker polls workflow OrderProcessing (none seen in the last 60 s): start a worker";
    const running = { ...manualRun, execution_id: lastRun, status: "RUNNING", ended_at: null };
    const routes = (execution: { status: number; body?: unknown }) =>
      new FakeServer((req) =>
        req.path === "/v1/schedules/nightly-orders" ? { status: 200, body: schedule } : execution,
      );
    const told = routes({ status: 200, body: { ...running, waiting: { reason: "no_worker", message: waiting } } });
    const r = await told.run(["schedule", "get", "nightly-orders"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  last run:   ${lastRun}\n  waiting:    ${waiting}\n`);
    expect(told.requests.map((q) => q.path)).toEqual([
      "/v1/schedules/nightly-orders",
      `/v1/executions/${encodeURIComponent(lastRun)}`,
    ]);
    // Running on a worker (no `waiting`), or gone from the server: the seed's block, no line added.
    for (const execution of [
      { status: 200, body: running },
      { status: 404, body: { code: "NOT_FOUND", message: "x" } },
    ]) {
      const plain = await routes(execution).run(["schedule", "get", "nightly-orders"]);
      expect(plain.code).toBe(0);
      expect(plain.stdout).not.toContain("waiting:");
      expect(plain.stdout).toContain(`  last run:   ${lastRun}\n  next fires:\n`);
    }
  });

  it("says a FAILED last run was retried and waits, where it showed the old outcome alone", async () => {
    const lastRun = "nightly-orders:2026-11-16T01:00:00Z";
    const outcome = { status: "FAILED", execution_id: lastRun, ended_at: "2026-11-16T01:00:02Z", error: "boom" };
    const schedule = { ...nightlyOrders, last_execution_id: lastRun, fired: 1, last_outcome: outcome };
    const waiting = "no worker polls workflow OrderProcessing (none seen in the last 60 s): start a worker";
    const retried = { ...manualRun, execution_id: lastRun, status: "RUNNING", run: 2, ended_at: null };
    const routes = (execution: unknown) =>
      new FakeServer((req) =>
        req.path === "/v1/schedules/nightly-orders"
          ? { status: 200, body: schedule }
          : { status: 200, body: execution },
      );
    const r = await routes({ ...retried, waiting: { reason: "no_worker", message: waiting } }).run([
      "schedule",
      "get",
      "nightly-orders",
    ]);
    expect(r.stdout).toContain(
      `  last run:   ${lastRun} (run 2, RUNNING after a retry; the outcome below is run 1's)\n  waiting:    ${waiting}\n`,
    );
    // Not retried: the block as before.
    const ended = await routes({ ...retried, status: "FAILED", run: 1 }).run(["schedule", "get", "nightly-orders"]);
    expect(ended.stdout).toContain(`  last run:   ${lastRun}\n`);
    // Run 5 after continue-as-new, the outcome an earlier execution's: no retry is claimed.
    const earlier = { ...outcome, status: "COMPLETED", execution_id: "nightly-orders:2026-11-15T01:00:00Z" };
    const continued = new FakeServer((req) =>
      req.path === "/v1/schedules/nightly-orders"
        ? { status: 200, body: { ...schedule, last_outcome: earlier } }
        : { status: 200, body: { ...retried, run: 5 } },
    );
    const c = await continued.run(["schedule", "get", "nightly-orders"]);
    expect(c.stdout).toContain(`  last run:   ${lastRun}\n`);
    expect(c.stdout).not.toContain("after a retry");
  });

  it("follows next_cursor to list every schedule", async () => {
    const server = new FakeServer((req) =>
      req.path.includes("cursor=c2")
        ? { status: 200, body: { schedules: [nightlyOrders], next_cursor: null } }
        : { status: 200, body: { schedules: [hourlyCheck], next_cursor: "c2" } },
    );
    const r = await server.run(["schedule", "list"]);
    expect(r.stdout.split("\n").map((l) => l.split(" ")[0])).toEqual([
      "SCHEDULE",
      "hourly-check",
      "nightly-orders",
      "",
    ]);
    expect(server.requests).toHaveLength(2);
    expect(r.stderr).toBe("");
    // --limit reads one page: a cut one is said on stderr, as orbit ps says it (it read as all there are).
    const cut = await server.run(["schedule", "list", "--limit", "1"]);
    expect(cut.stdout.split("\n").map((l) => l.split(" ")[0])).toEqual(["SCHEDULE", "hourly-check", ""]);
    expect(cut.stderr).toBe("(the first 1 shown; more with a larger --limit, or without it)\n");
  });
});

describe("orbit schedule trigger, pause, resume, delete, update", () => {
  it("prints started and not-started, both with exit 0", async () => {
    let calls = 0;
    const server = new FakeServer(() =>
      calls++ === 0
        ? { status: 201, body: { started: true, execution_id: manualRun.execution_id, overlap: "skip" } }
        : {
            status: 200,
            body: {
              started: false,
              execution_id: null,
              message: "not started: the previous execution of nightly-orders is still running (overlap: skip)",
              overlap: "skip",
            },
          },
    );
    const first = await server.run(["schedule", "trigger", "nightly-orders"]);
    const second = await server.run(["schedule", "trigger", "nightly-orders"]);
    expect(first).toEqual({
      code: 0,
      stdout: "started execution nightly-orders:manual:2026-11-15T18:52:22.296Z\n",
      stderr: "",
    });
    expect(second).toEqual({
      code: 0,
      stdout: "not started: the previous execution of nightly-orders is still running (overlap: skip)\n",
      stderr: "",
    });
  });

  it("sends the fences and prints short confirmations", async () => {
    const paused = { ...nightlyOrders, paused: true, state: "paused" as const };
    let current: ScheduleJson = nightlyOrders;
    const server = new FakeServer((req) => {
      if (req.method === "DELETE") return { status: 204 };
      if (req.path.includes("/pause")) current = paused;
      if (req.path.includes("/resume")) current = nightlyOrders;
      return { status: 200, body: current };
    });
    const pause = await server.run(["schedule", "pause", "nightly-orders", "--if-match", "3", "--note", "freeze"]);
    const resume = await server.run(["schedule", "resume", "nightly-orders", "--catch-up", "--expected-revision", "4"]);
    const del = await server.run(["schedule", "delete", "nightly-orders"]);
    expect([pause.stdout, resume.stdout, del.stdout]).toEqual([
      "paused nightly-orders (freeze)\n",
      "resumed nightly-orders (next fire 2026-11-16T01:00:00Z)\n",
      "deleted nightly-orders\n",
    ]);
    // A resume with an occurrence held in the buffer names it, not its past time as the next fire.
    const held = new FakeServer((req) => ({
      status: 200,
      body: {
        ...nightlyOrders,
        overlap: "buffer_one",
        buffered: ["2026-11-15T01:00:00Z"],
        next_fire_at: "2026-11-15T01:00:00Z",
        ...(req.method === "GET" ? { paused: true, state: "paused" } : {}),
      },
    }));
    expect((await held.run(["schedule", "resume", "nightly-orders"])).stdout).toBe(
      "resumed nightly-orders (buffered 2026-11-15T01:00:00Z starts once nothing runs; next fire 2026-11-16T01:00:00Z)\n",
    );
    const [p, r] = server.requests.filter((q) => q.method === "POST");
    expect(p?.headers["if-match"]).toBe('"3"');
    expect(p?.body).toEqual({ note: "freeze" });
    expect(r?.path).toBe("/v1/schedules/nightly-orders/resume?expected_revision=4");
    expect(r?.body).toEqual({ catch_up: true });
  });

  it("says a pause of a paused schedule and a resume of an active one changed nothing, exit 0", async () => {
    // Both printed `paused x` / `resumed x (…)` as if they had changed something (a tester).
    const paused = { ...nightlyOrders, paused: true, state: "paused" as const, pause_note: "freeze" };
    const stays = (body: ScheduleJson) => new FakeServer(() => ({ status: 200, body }));
    expect(await stays(paused).run(["schedule", "pause", "nightly-orders"])).toEqual({
      code: 0,
      stdout: "nightly-orders is already paused (note: freeze)\n",
      stderr: "",
    });
    expect((await stays(paused).run(["schedule", "pause", "nightly-orders", "--note", "audit"])).stdout).toBe(
      "nightly-orders is already paused; its note is now: audit\n",
    );
    expect(await stays(nightlyOrders).run(["schedule", "resume", "nightly-orders"])).toEqual({
      code: 0,
      stdout: "nightly-orders is already active (next fire 2026-11-16T01:00:00Z)\n",
      stderr: "",
    });
    const ended = { ...nightlyOrders, state: "ended" as const, next_fire_at: null, next_fire_times: [] };
    expect((await stays(ended).run(["schedule", "resume", "nightly-orders"])).stdout).toBe(
      "nightly-orders is not paused (no next fire: ended)\n",
    );
    // --json prints the answer as it came, and reads nothing before.
    const json = stays(paused);
    await json.run(["schedule", "pause", "nightly-orders", "--json"]);
    expect(json.requests.map((q) => q.method)).toEqual(["POST"]);
  });

  it("sends only the given settings in an update, null for --unset", async () => {
    const server = new FakeServer(() => ({ status: 200, body: nightlyOrders }));
    const r = await server.run(["schedule", "update", "nightly-orders", "--cron", "30 2 * * *", "--unset", "jitter"]);
    expect(r.code).toBe(0);
    expect(server.requests[0]).toMatchObject({ method: "PATCH", body: { cron: "30 2 * * *", jitter: null } });
  });
});

describe("ids a URL cannot name", () => {
  it('"." and ".." are refused before sending, not sent to another route', async () => {
    // `orbit schedule get .` fetched the list (/v1/schedules/) and died on it with a TypeError
    // stack; `orbit status ..` asked GET /v1/.
    const server = new FakeServer(() => ({ status: 200, body: { schedules: [], next_cursor: null } }));
    for (const args of [
      ["schedule", "get", "."],
      ["status", ".."],
      ["cancel", "."],
    ]) {
      const r = await server.run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`orbit: "${args.at(-1)}" cannot be an id: a URL reads it as a path step\n`);
    }
    expect(server.requests).toEqual([]);
  });
});

describe("orbit schedule update: a setting given and unset", () => {
  it("is a usage error that sends nothing", async () => {
    // --unset silently won: the schedule kept UTC and the --timezone given beside it was dropped.
    const server = new FakeServer(() => ({ status: 200, body: nightlyOrders }));
    const r = await server.run([
      "schedule",
      "update",
      "nightly-orders",
      "--timezone",
      "Europe/London",
      "--unset",
      "timezone",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("orbit: --timezone and --unset timezone contradict each other: give one of them\n");
    expect(server.requests).toEqual([]);
  });

  it("--unset of a required setting or of no setting is a usage error that sends nothing", async () => {
    // `--unset bogus` went to the server (exit 1); `--unset workflow` came back "workflow must be a string".
    const server = new FakeServer(() => ({ status: 200, body: nightlyOrders }));
    const required = await server.run(["schedule", "update", "nightly-orders", "--unset", "workflow"]);
    expect(required.code).toBe(2);
    expect(required.stderr).toMatch(
      /a schedule's workflow is required and cannot be cleared; --unset takes one of version, /i,
    );
    const bogus = await server.run(["schedule", "update", "nightly-orders", "--unset", "bogus"]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/no setting is named bogus; --unset takes one of /i);
    // A name of every object's prototype is no setting either (it was "required").
    expect((await server.run(["schedule", "update", "nightly-orders", "--unset", "constructor"])).stderr).toMatch(
      /no setting is named constructor;/i,
    );
    expect(server.requests).toEqual([]);
    // Kebab case as the flags are written, or the setting's own name.
    expect((await server.run(["schedule", "update", "nightly-orders", "--unset", "max-runs"])).code).toBe(0);
    expect(server.requests.at(-1)?.body).toEqual({ max_runs: null });
  });

  it("--paused and --no-paused together are a usage error in either order (the last one won)", async () => {
    const server = new FakeServer(() => ({ status: 200, body: nightlyOrders }));
    for (const flags of [
      ["--paused", "--no-paused"],
      ["--no-paused", "--description", "x", "--paused"],
    ]) {
      const r = await server.run(["schedule", "update", "nightly-orders", ...flags]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("orbit: --paused and --no-paused contradict each other: give one of them\n");
    }
    expect(server.requests).toEqual([]);
    const one = await server.run(["schedule", "update", "nightly-orders", "--paused"]);
    expect(one.code).toBe(0);
  });
});
