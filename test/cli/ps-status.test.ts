/**
 * orbit ps, status, cancel, backfill, schedule list's filters and workflow commands against canned
 * answers (docs/cli.md). Split from commands.test.ts.
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { everyTenSeconds, manualRun, PS_NOW } from "./fixtures/api.js";

describe("orbit ps, status, cancel, workflow", () => {
  it("lists executions with their age and filters", async () => {
    const server = new FakeServer(() => ({ status: 200, body: { executions: everyTenSeconds, next_cursor: "more" } }));
    const r = await server.run(["ps", "--workflow", "OrderProcessing", "--limit", "3"], { now: PS_NOW });
    expect(r.stdout.split("\n")[1]).toBe(
      "orders-every-10s:2026-11-15T18:51:30Z  OrderProcessing          1.0.0      COMPLETED     259ms",
    );
    expect(server.requests[0]?.path).toBe("/v1/executions?workflow=OrderProcessing&limit=3&view=summary");
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
    expect(server.requests[0]?.path).toBe("/v1/executions?status=RUNNING&limit=50&view=summary");
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
