import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { ScheduleJson } from "../../src/client/types.js";
import { FakeServer } from "./fake-server.js";
import { everyTenSeconds, hourlyCheck, manualRun, nightlyOrders, PS_NOW } from "./fixtures/api.js";
import { runCli } from "./run-cli.js";

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

describe("orbit ps, status, cancel, workflow", () => {
  it("lists executions with their age and filters", async () => {
    const server = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: "more" } }));
    const r = await server.run(["ps", "--workflow", "OrderProcessing", "--limit", "3"], { now: PS_NOW });
    expect(r.stdout.split("\n")[1]).toBe(
      "orders-every-10s:2026-11-15T18:51:30Z  OrderProcessing          1.0.0      COMPLETED     259ms",
    );
    expect(server.requests[0]?.path).toBe("/v1/executions?workflow=OrderProcessing&limit=3");
    // Cut at the limit with more on the server: said on stderr, the table unchanged.
    expect(r.stderr).toBe(`(the newest ${everyTenSeconds.length} shown; more with --limit N or --all)\n`);
    const all = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: null } }));
    expect((await all.run(["ps"], { now: PS_NOW })).stderr).toBe("");
  });

  it("refuses --limit with --all (exit 2, nothing sent)", async () => {
    // --all won silently: `orbit ps --all --limit 5` printed every execution.
    const server = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: null } }));
    const r = await server.run(["ps", "--all", "--limit", "5"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("orbit: option '--all' cannot be used with option '--limit <n>'");
    expect(server.requests).toEqual([]);
  });

  it("takes --status in any case and refuses an unknown one or an empty filter (exit 2, nothing sent)", async () => {
    const server = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: null } }));
    // `--status running` was sent as is and refused by the server: "query parameter status …", exit 1.
    const lower = await server.run(["ps", "--status", "running"]);
    expect(lower.code).toBe(0);
    expect(server.requests[0]?.path).toBe("/v1/executions?status=RUNNING&limit=50");
    const unknown = await server.run(["ps", "--status", "DONE"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("is invalid. Give one of RUNNING, COMPENSATING, COMPLETED, FAILED, CANCELLED.");
    // `--workflow ''` listed every execution.
    for (const flag of ["--workflow", "--schedule"]) {
      const empty = await server.run(["ps", flag, ""]);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain("is invalid. Give a value (it is empty).");
    }
    expect(server.requests).toHaveLength(1);
  });

  it("says how many occurrences a backfill covered, one in the singular", async () => {
    const answer = (occurrences: number) => ({
      status: 200,
      body: {
        start_at: "2026-11-01T00:00:00Z",
        end_at: "2026-11-02T00:00:00Z",
        occurrences,
        started: occurrences,
        already_existed: 0,
      },
    });
    let n = 1;
    const server = new FakeServer(() => answer(n));
    const args = [
      "schedule",
      "backfill",
      "x",
      "--start-at",
      "2026-11-01T00:00:00Z",
      "--end-at",
      "2026-11-02T00:00:00Z",
    ];
    expect((await server.run(args)).stdout).toBe(
      "backfilled x from 2026-11-01T00:00:00Z to 2026-11-02T00:00:00Z: 1 occurrence, 1 started, 0 already existed\n",
    );
    n = 2;
    expect((await server.run(args)).stdout).toContain(": 2 occurrences, 2 started");
  });

  it("takes schedule list --state in any case and refuses an unknown one (exit 2, nothing sent)", async () => {
    const server = new FakeServer(() => ({ status: 200, body: { schedules: [], next_cursor: null } }));
    expect((await server.run(["schedule", "list", "--state", "Paused"])).code).toBe(0);
    expect(server.requests[0]?.path).toMatch(/[?&]state=paused(&|$)/);
    // Sent as is before, and refused by the server with exit 1.
    const unknown = await server.run(["schedule", "list", "--state", "bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("is invalid. Give one of active, paused, ended.");
    expect(server.requests).toHaveLength(1);
  });

  it("takes schedule list --all, as ps does: every page, as without it; with --limit it is bad usage", async () => {
    const server = new FakeServer(() => ({ status: 200, body: { schedules: [], next_cursor: null } }));
    const all = await server.run(["schedule", "list", "--all"]);
    expect({ code: all.code, stderr: all.stderr }).toEqual({ code: 0, stderr: "" });
    expect(server.requests[0]?.path).toMatch(/^\/v1\/schedules\?/);
    const both = await server.run(["schedule", "list", "--all", "--limit", "5"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("cannot be used with option '--limit <n>'");
    expect(server.requests).toHaveLength(1);
  });

  it("counts a retried run's elapsed from its retry, not from run 1's start", async () => {
    // Run 1 started 11 minutes before, failed, sat FAILED; `orbit retry` started run 2 2 s ago.
    const retried = {
      ...manualRun,
      status: "RUNNING",
      started_at: "2026-11-15T18:40:00.347Z",
      ended_at: null,
      run: 2,
      attempt: 1,
    };
    const events = [
      { seq: 1, type: "WorkflowFailed", at: "2026-11-15T18:40:01.000Z", data: {} },
      { seq: 2, type: "WorkflowRetried", at: "2026-11-15T18:50:58.347Z", data: { run: 2 } },
    ];
    const server = new FakeServer((req) =>
      req.path.endsWith("/events") ? { status: 200, body: { events } } : { status: 200, body: retried },
    );
    const r = await server.run(["status", manualRun.execution_id]);
    expect(r.stdout).toContain("  elapsed: 2.0s\n  run: 2   attempt: 1\n");
    // Continued as new (no retry): the execution has run since started_at.
    events.pop();
    expect((await server.run(["status", manualRun.execution_id])).stdout).toContain("  elapsed: 11m00s\n");
    // Run 1 asks for no events.
    const first = new FakeServer(() => ({ status: 200, body: manualRun }));
    await first.run(["status", manualRun.execution_id]);
    expect(first.requests).toHaveLength(1);
  });

  it("says on stderr which filter matched nothing, keeping the header and exit 0", async () => {
    const server = new FakeServer(() => ({ status: 200, body: { executions: [], next_cursor: null } }));
    const header = "EXECUTION                              WORKFLOW                 VERSION    STATUS        AGE\n";
    // It printed the header alone, as for a server with no executions at all.
    expect(await server.run(["ps", "--schedule", "nope"])).toEqual({
      code: 0,
      stdout: header,
      stderr: "no execution matches --schedule nope\n",
    });
    expect((await server.run(["ps", "--workflow", "Nope", "--status", "running"])).stderr).toBe(
      "no execution matches --workflow Nope --status RUNNING\n",
    );
    expect((await server.run(["ps", "--workflow", "Order Processing"])).stderr).toBe(
      'no execution matches --workflow "Order Processing"\n',
    );
    // No filter: an empty server, nothing to say. --json: the JSON says it.
    expect(await server.run(["ps"])).toEqual({ code: 0, stdout: header, stderr: "" });
    expect((await server.run(["ps", "--schedule", "nope", "--json"])).stderr).toBe("");
  });

  it("says a cancel already requested of a running execution was already requested, with the first reason", async () => {
    const running = { ...manualRun, status: "RUNNING", ended_at: null };
    let requested: string | undefined;
    const server = new FakeServer((req) => {
      if (req.method === "POST") requested ??= (req.body as { reason?: string }).reason ?? "cancelled";
      return { status: 200, body: requested === undefined ? running : { ...running, cancel_reason: requested } };
    });
    const first = await server.run(["cancel", manualRun.execution_id, "--reason", "operator"]);
    expect(first.stdout).toBe(
      `cancel requested for ${manualRun.execution_id} (RUNNING: its worker runs the compensations)\n`,
    );
    // It printed `cancel requested for …` again, and the second reason was silently dropped.
    const again = await server.run(["cancel", manualRun.execution_id, "--reason", "duplicate"]);
    expect(again.stdout).toBe(
      `cancel already requested for ${manualRun.execution_id} (cancel reason: operator; RUNNING: its worker runs the compensations)\n`,
    );
    expect(again.code).toBe(0);
    // An identity that may cancel but not read: the answer alone.
    const noRead = new FakeServer((req) =>
      req.method === "GET"
        ? { status: 403, body: { code: "FORBIDDEN", message: "no" } }
        : { status: 200, body: { ...running, cancel_reason: "operator" } },
    );
    const blind = await noRead.run(["cancel", manualRun.execution_id]);
    expect(blind).toMatchObject({
      code: 0,
      stdout: `cancel requested for ${manualRun.execution_id} (RUNNING: its worker runs the compensations)\n`,
    });
  });

  it("prints an execution and a cancel", async () => {
    const server = new FakeServer((req) =>
      req.method === "POST"
        ? { status: 200, body: { ...manualRun, status: "CANCELLED", cancel_reason: "operator" } }
        : { status: 200, body: manualRun },
    );
    const status = await server.run(["status", manualRun.execution_id]);
    expect(status.stdout).toBe(
      "COMPLETED nightly-orders:manual:2026-11-15T18:52:22.296Z  OrderProcessing@1.0.0\n  schedule: nightly-orders\n  elapsed: 33ms\n",
    );
    const cancel = await server.run(["cancel", manualRun.execution_id, "--reason", "operator"]);
    expect(cancel.stdout).toBe(`cancelled ${manualRun.execution_id}\n`);
    expect(server.requests.find((r) => r.method === "POST")?.body).toEqual({ reason: "operator" });
    // Cancelled before for another reason (the server keeps the first): this request changed nothing.
    const again = await server.run(["cancel", manualRun.execution_id, "--reason", "duplicate"]);
    expect(again.stdout).toBe(
      `not cancelled: ${manualRun.execution_id} already ended CANCELLED (cancel reason: operator)\n`,
    );
    expect((await server.run(["cancel", manualRun.execution_id])).stdout).toBe(
      `not cancelled: ${manualRun.execution_id} already ended CANCELLED (cancel reason: operator)\n`,
    );
  });

  it("says whether a workflow version was new", async () => {
    const wf = { name: "OrderProcessing", version: "1.0.0", input_schema: null, description: null, created_at: "x" };
    let status = 201;
    const server = new FakeServer(() => ({ status, body: wf }));
    const args = ["workflow", "register", "--name", "OrderProcessing", "--version", "1.0.0", "--input-schema", "{}"];
    expect((await server.run(args)).stdout).toBe("registered OrderProcessing@1.0.0\n");
    status = 200;
    expect((await server.run(args)).stdout).toBe("already registered OrderProcessing@1.0.0\n");
    expect(server.requests[0]?.body).toEqual({ name: "OrderProcessing", version: "1.0.0", input_schema: {} });
    // The workflow as arguments (`Name@version`, `Name version` as deprecate takes them, or `Name`
    // with --version) is the same request.
    for (const given of [
      ["OrderProcessing@1.0.0"],
      ["OrderProcessing", "1.0.0"],
      ["OrderProcessing", "--version", "1.0.0"],
    ]) {
      await server.run(["workflow", "register", ...given]);
      expect(server.requests.at(-1)?.body).toEqual({ name: "OrderProcessing", version: "1.0.0" });
    }
  });

  it("deprecates a version given as Name 1.0.0 or Name@1.0.0, as register takes it", async () => {
    const wf = { name: "OrderProcessing", version: "1.0.0", deprecated_at: "x" };
    const server = new FakeServer(() => ({ status: 200, body: wf }));
    for (const given of [["OrderProcessing", "1.0.0"], ["OrderProcessing@1.0.0"], ["OrderProcessing@1.0.0", "1.0.0"]]) {
      expect((await server.run(["workflow", "deprecate", ...given])).stdout).toBe("deprecated OrderProcessing@1.0.0\n");
      expect(server.requests.at(-1)).toMatchObject({
        method: "POST",
        path: "/v1/workflows/OrderProcessing/versions/1.0.0/deprecate",
      });
    }
    const none = await server.run(["workflow", "deprecate", "OrderProcessing"]);
    expect(none).toMatchObject({ code: 2 });
    expect(none.stderr).toMatch(
      /give the workflow and its version: orbit workflow deprecate Name 1\.0\.0 \(or Name@1\.0\.0\)/,
    );
    const two = await server.run(["workflow", "undeprecate", "OrderProcessing@1.0.0", "2.0.0"]);
    expect(two).toMatchObject({ code: 2 });
    expect(two.stderr).toMatch(/the version is "1\.0\.0" in <workflow> but "2\.0\.0" after it: give one/);
  });
});

describe("usage errors and an unreachable server", () => {
  it.each([
    ["an unknown flag", ["schedule", "list", "--colour"], /unknown option '--colour'/],
    // Other schedulers' names for an option: the synonym is suggested where the command has it.
    [
      "--every for --interval",
      ["schedule", "create", "x", "--workflow", "W", "--every", "2s"],
      /'--every'\n\(Did you mean --interval\?\)/,
    ],
    [
      "--database-url for --database",
      ["server", "--database-url", "postgres://x"],
      /'--database-url'\n\(Did you mean --database\?\)/,
    ],
    // One name, two meanings: the one the command has.
    ["--data for server's --data-dir", ["server", "--data", "./d"], /'--data'\n\(Did you mean --data-dir\?\)/],
    [
      "--data for a create's --input",
      ["schedule", "create", "x", "--workflow", "W", "--data", "{}"],
      /'--data'\n\(Did you mean --input\?\)/,
    ],
    [
      "--tz for --timezone",
      ["schedule", "create", "x", "--workflow", "W", "--tz", "UTC"],
      /'--tz'\n\(Did you mean --timezone\?\)/,
    ],
    // The API's names for a setting, as flags: the API suggested catchup for misfire_policy, the CLI nothing.
    [
      "--misfire-policy for --catchup",
      ["schedule", "update", "x", "--misfire-policy", "latest"],
      /'--misfire-policy'\n\(Did you mean --catchup\?\)/,
    ],
    [
      "--overlap-policy for --overlap",
      ["schedule", "create", "x", "--workflow", "W", "--interval", "2s", "--overlap-policy", "skip"],
      /'--overlap-policy'\n\(Did you mean --overlap\?\)/,
    ],
    ["--tags for --label", ["schedule", "update", "x", "--tags", "a=b"], /'--tags'\n\(Did you mean --label\?\)/],
    ["--timeout for --run-timeout", ["schedule", "update", "x", "--timeout", "1m"], /\(Did you mean --run-timeout\?\)/],
    // Other tools' names for a command: the synonym the command (or the group) has.
    ["orbit -v", ["-v"], /unknown option '-v'\n\(Did you mean --version\?\)/],
    ["orbit execution list", ["execution", "list"], /unknown command 'execution'\n\(Did you mean ps\?\)/],
    // One execution asked for by a noun and a verb: the command that shows or acts on one, not the list.
    ["orbit execution describe", ["execution", "describe", "x"], /'execution'\n\(Did you mean orbit status\?\)/],
    ["orbit execution get", ["execution", "get", "x"], /'execution'\n\(Did you mean orbit status\?\)/],
    ["orbit executions cancel", ["executions", "cancel", "x"], /'executions'\n\(Did you mean orbit cancel\?\)/],
    ["orbit runs logs", ["runs", "logs", "x"], /'runs'\n\(Did you mean orbit events\?\)/],
    ["orbit schedule ls", ["schedule", "ls"], /unknown command 'ls'\n\(Did you mean list\?\)/],
    ["orbit schedule show", ["schedule", "show", "x"], /unknown command 'show'\n\(Did you mean get\?\)/],
    ["orbit schedule status", ["schedule", "status", "x"], /unknown command 'status'\n\(Did you mean get\?\)/],
    ["orbit show", ["show", "x"], /unknown command 'show'\n\(Did you mean status\?\)/],
    [
      "--id where the id is an argument",
      ["schedule", "create", "--id", "x", "--workflow", "W", "--interval", "2s"],
      /unknown option '--id'\n\(The schedule id is an argument: orbit schedule create <schedule-id> …\)/,
    ],
    [
      "--id alone, before the required options it lacks",
      ["schedule", "create", "--id", "x"],
      /^orbit: unknown option '--id'\n\(The schedule id is an argument: orbit schedule create <schedule-id> …\)/,
    ],
    [
      "--id on a top-level command",
      ["cancel", "--id", "e"],
      /\(The execution id is an argument: orbit cancel <execution-id> …\)/,
    ],
    ["orbit run", ["run", "W"], /unknown command 'run'\n\(Did you mean start\?\)/],
    ["orbit schedule run", ["schedule", "run", "x"], /unknown command 'run'\n\(Did you mean trigger\?\)/],
    // A group's command without its group: it was `unknown command 'list'` and no more.
    ["orbit list", ["list"], /unknown command 'list'\n\(Did you mean orbit schedule list or orbit workflow list\?\)/],
    ["orbit get", ["get", "x"], /unknown command 'get'\n\(Did you mean orbit schedule get\?\)/],
    ["orbit trigger", ["trigger", "x"], /unknown command 'trigger'\n\(Did you mean orbit schedule trigger\?\)/],
    [
      "orbit create",
      ["create", "x", "--workflow", "W", "--interval", "2s"],
      /unknown command 'create'\n\(Did you mean orbit schedule create\?\)/,
    ],
    ["orbit apply", ["apply", "-f", "f.yaml"], /unknown command 'apply'\n\(Did you mean orbit schedule apply\?\)/],
    [
      "orbit preview",
      ["preview", "--cron", "0 2 * * *"],
      /unknown command 'preview'\n\(Did you mean orbit schedule preview\?\)/,
    ],
    ["orbit rm", ["rm", "x"], /unknown command 'rm'\n\(Did you mean orbit schedule delete\?\)/],
    ["orbit schedule logs", ["schedule", "logs", "x"], /unknown command 'logs'\n\(Did you mean occurrences\?\)/],
    ["orbit logs", ["logs", "x"], /unknown command 'logs'\n\(Did you mean events\?\)/],
    [
      "register without a workflow",
      ["workflow", "register"],
      /give the workflow: orbit workflow register OrderProcessing@1\.0\.0/,
    ],
    [
      "register without a version",
      ["workflow", "register", "Orders"],
      /give the version: orbit workflow register Orders@1\.0\.0/,
    ],
    [
      "register with two versions",
      ["workflow", "register", "X@1.0.0", "--version", "2.0.0"],
      /the version is "1\.0\.0" in <workflow> but "2\.0\.0" in --version/,
    ],
    ["an unknown command", ["frobnicate"], /unknown command 'frobnicate'\n(?!\(Did you mean)/],
    // Names Object.prototype answers: it failed inside the CLI ("… .find is not a function", exit 1).
    ["orbit toString", ["toString"], /unknown command 'toString'\n(?!\(Did you mean)/],
    ["orbit schedule constructor", ["schedule", "constructor"], /unknown command 'constructor'\n(?!\(Did you mean)/],

    [
      // Checked before commander's "required option '--start-at' not specified".
      "--from for backfill's required --start-at",
      ["schedule", "backfill", "x", "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"],
      /'--from'\n\(Did you mean --start-at\?\)/,
    ],
    [
      "--to for backfill's required --end-at",
      ["schedule", "backfill", "x", "--start-at", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"],
      /'--to'\n\(Did you mean --end-at\?\)/,
    ],
    [
      "backfill without --end-at",
      ["schedule", "backfill", "x", "--start-at", "2026-11-01T00:00:00Z"],
      /required option '--end-at <time>' not specified/,
    ],
    [
      "--every where there is no --interval",
      ["schedule", "list", "--every", "2s"],
      /unknown option '--every'\n(?!\(Did you mean --interval)/,
    ],
    ["malformed --input", ["schedule", "trigger", "x", "--input", "{nope"], /is not JSON/],
    ["an --input that is not an object", ["schedule", "trigger", "x", "--input", "[1]"], /JSON object/],
    ["create without timing", ["schedule", "create", "x", "--workflow", "W"], /give --cron/],
    ["create without --workflow", ["schedule", "create", "x", "--cron", "* * * * *"], /--workflow <name>/],
    // The id first: it said --workflow was missing.
    ["create without an id", ["schedule", "create", "--cron", "* * * * *"], /missing required argument 'schedule-id'/],
    ["an update without settings", ["schedule", "update", "x"], /nothing to change/],
    ["a bad --cluster", ["server", "--cluster", "ring"], /Allowed choices are single, active-standby, shared/],
    ["a bad --misfire-grace", ["server", "--misfire-grace", "soon"], /is not a duration/],
    // 0 was accepted, and every occurrence of a per-second schedule was recorded missed.
    [
      "a --misfire-grace under 1s",
      ["server", "--misfire-grace", "0s"],
      /--misfire-grace must be at least 1s, got 0 ms/,
    ],
    ["a --misfire-grace over 365d", ["server", "--misfire-grace", "366d"], /--misfire-grace must be at most 365d/],
    ["a --ledger-retention of 0", ["server", "--ledger-retention", "0"], /--ledger-retention.*from 1 to 1000000/],
    // The last one won without a word.
    [
      "a workflow given twice to --retention-workflow",
      ["server", "--retention-workflow", "Tick=5d", "--retention-workflow", "Tick=10d"],
      /argument 'Tick=10d' is invalid\. Tick is given twice; give each workflow once\./,
    ],
    [
      "a --token with a line break",
      ["ps", "--token", "abc\ndef"],
      /--token holds a line break or another character an HTTP header cannot carry/,
    ],
  ])("exits 2 on %s", async (_name, args, message) => {
    const server = new FakeServer(() => undefined);
    const r = await server.run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it.each([["ps"], ["schedule", "list"], ["schedule", "get", "x"], ["workflow", "list"]])(
    "exits 1 with a clear message when another kind of server answers 200 with JSON of another shape: %s",
    async (...args) => {
      const server = new FakeServer(() => ({ status: 200, body: { hello: "not orbit" } }));
      const r = await server.run(args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^orbit: the server's answer is not what orbit \S+ expects \(.+\); is --server/);
      expect(r.stderr).not.toContain("    at ");
    },
  );

  it("exits 1 with a clear message when nothing listens", async () => {
    const refused = (async () => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) });
    }) as typeof fetch;
    const r = await runCli(["ps"], { fetch: refused });
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: "orbit: cannot reach the Orbit server at http://127.0.0.1:7233 (is `orbit server` running?)\n",
    });
  });

  it("turns a non-JSON error answer into a message", async () => {
    const proxy = (async () =>
      new Response("upstream down", { status: 502, statusText: "Bad Gateway" })) as typeof fetch;
    const r = await runCli(["ps"], { fetch: proxy });
    expect(r).toEqual({ code: 1, stdout: "", stderr: "orbit: the server answered 502 Bad Gateway: upstream down\n" });
  });

  it("says an HTML error page is not Orbit's instead of printing it (another program on the port)", async () => {
    // It printed the whole page, 200 characters of markup over several lines.
    const page =
      "<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1></body>\n</html>\n";
    const other = (async () =>
      new Response(page, {
        status: 404,
        statusText: "Not Found",
        headers: { "content-type": "text/html" },
      })) as typeof fetch;
    const r = await runCli(["ps"], { fetch: other });
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "orbit: the server answered 404 Not Found with a web page, not an Orbit answer: is http://127.0.0.1:7233 the Orbit server's address?\n",
    });
    const multiLine = (async () =>
      new Response("bad gateway\nretry later\n", { status: 502, statusText: "Bad Gateway" })) as typeof fetch;
    expect((await runCli(["ps"], { fetch: multiLine })).stderr).toBe(
      "orbit: the server answered 502 Bad Gateway: bad gateway\n",
    );
  });

  it("refuses a 200 from something that is not an Orbit server instead of reading it as one", async () => {
    // Another program on the address answering {"hello":1}: `paused x`, `deleted x`, `undefined`
    // fields, exit 0, for writes that never happened (a tester).
    const other = (async () =>
      new Response(JSON.stringify({ hello: 1 }), {
        status: 200,
        headers: { "content-type": "application/json" },
      })) as typeof fetch;
    for (const argv of [["schedule", "pause", "x"], ["schedule", "delete", "x"], ["status", "x"], ["ps"]]) {
      expect(await runCli(argv, { fetch: other }), argv.join(" ")).toEqual({
        code: 1,
        stdout: "",
        stderr:
          "orbit: http://127.0.0.1:7233 answered, but not as an Orbit server (no Orbit-Version header): is it the address of `orbit server`?\n",
      });
    }
    // An Orbit of a release before the header: its OpenAPI document says so, and it is read as before.
    const older = (async (input: string | URL | Request) => {
      const path = new URL(String(input)).pathname;
      const body = path === "/v1/openapi.json" ? { info: { title: "Orbit" } } : { executions: [], next_cursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    }) as typeof fetch;
    const r = await runCli(["ps"], { fetch: older, env: { ORBIT_SERVER: "http://older.test:7233" } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("follows no redirect: a write turned into a GET of where it led was read as the write's answer", async () => {
    // fetch turned the redirected DELETE into a GET, an Orbit answered it 200, and the CLI said
    // `deleted x`, exit 0, for nothing deleted (a tester, with an http-to-https redirect in mind).
    const listen = (server: Server) =>
      new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
      );
    const orbitLike = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "orbit-version": "0.1.0" });
      res.end(JSON.stringify(nightlyOrders));
    });
    const target = await listen(orbitLike);
    const front = createServer((req, res) => {
      res.writeHead(303, { location: `http://127.0.0.1:${target}${req.url}` });
      res.end();
    });
    const port = await listen(front);
    try {
      const r = await runCli(["schedule", "delete", "x"], { env: { ORBIT_SERVER: `http://127.0.0.1:${port}` } });
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `orbit: http://127.0.0.1:${port} answered with a redirect (303 to "http://127.0.0.1:${target}/v1/schedules/x"), which is not followed: give the Orbit server's own address\n`,
      );
      expect(r.code).toBe(1);
    } finally {
      front.close();
      orbitLike.close();
    }
  });
});
