import { expect, it } from "vitest";
import { Executions, type ExecutionsOptions } from "../../src/engine/executions.js";
import { executionToJson } from "../../src/engine/serialize.js";
import { Workflows } from "../../src/engine/workflows.js";
import { describeEachDialect, ManualClock, useStore } from "../helpers/db.js";
import { ORDER_SCHEMA, refusal } from "./fixtures.js";

const ORDER = { order_id: "A-1", amount: 10 };

describeEachDialect("executions", (dialect) => {
  const db = useStore(dialect);
  let clock: ManualClock;

  async function engine(options: Partial<ExecutionsOptions> = {}) {
    clock = new ManualClock();
    let n = 0;
    const workflows = new Workflows({ store: db.store, clock });
    await workflows.register({ name: "OrderProcessing", version: "1.0.0", input_schema: ORDER_SCHEMA });
    await workflows.register({ name: "Other", version: "2.0.0" });
    const executions = new Executions({ store: db.store, clock, workflows, newId: () => `id-${++n}`, ...options });
    return { workflows, executions };
  }

  it("starts RUNNING with defaults stored, a WorkflowCreated event and a pending task", async () => {
    const { executions } = await engine();
    const trigger = { type: "cron", schedule_id: "nightly", scheduled_for: "2026-11-16T01:00:00Z" };
    const { execution, created } = await executions.start({
      executionId: "nightly:2026-11-16T01:00:00Z",
      workflow: "OrderProcessing",
      input: ORDER,
      scheduleId: "nightly",
      trigger,
    });
    expect(created).toBe(true);
    const stored = await executions.get("nightly:2026-11-16T01:00:00Z");
    expect(stored).toEqual(execution);
    expect(stored).toMatchObject({
      status: "RUNNING",
      version: "1.0.0",
      input: { ...ORDER, currency: "EUR", priority: "low" },
      scheduleId: "nightly",
      trigger,
      createdMs: clock.now(),
      startedMs: clock.now(),
      endedMs: null,
    });
    const events = await executions.events(execution.executionId);
    expect(events).toEqual([
      {
        executionId: execution.executionId,
        seq: 1,
        type: "WorkflowCreated",
        data: { workflow: "OrderProcessing", version: "1.0.0", input: stored.input, schedule_id: "nightly", trigger },
        atMs: clock.now(),
      },
    ]);
    expect(await db.store.getTaskForExecution(execution.executionId)).toMatchObject({
      state: "pending",
      attempt: 1,
      run: 1,
    });
    expect(executionToJson(stored)).toEqual({
      execution_id: "nightly:2026-11-16T01:00:00Z",
      workflow: "OrderProcessing",
      version: "1.0.0",
      input: stored.input,
      status: "RUNNING",
      schedule_id: "nightly",
      trigger,
      result: null,
      error: null,
      created_at: "2026-11-15T18:51:00Z",
      started_at: "2026-11-15T18:51:00Z",
      ended_at: null,
      run: 1,
      attempt: 1,
    });
  });

  it("generates an id when none is given and uses the latest version when none is named", async () => {
    const { executions, workflows } = await engine();
    await workflows.register({ name: "Other", version: "2.1.0" });
    const { execution } = await executions.start({ workflow: "Other" });
    expect(execution.executionId).toBe("id-1");
    expect(execution.version).toBe("2.1.0");
    expect(execution.input).toEqual({});
  });

  it("is a no-op for an id that exists: same execution, created false, nothing added", async () => {
    const { executions } = await engine();
    const first = await executions.start({ executionId: "x", workflow: "OrderProcessing", input: ORDER });
    clock.advance(5000);
    const again = await executions.start({ executionId: "x", workflow: "Other", input: { different: true } });
    expect(again.created).toBe(false);
    expect(again.execution).toEqual(first.execution);
    expect(await executions.events("x")).toHaveLength(1);
    expect((await executions.list()).executions).toHaveLength(1);
  });

  it("refuses invalid input, a 2 MB input and deep nesting, storing nothing", async () => {
    const { executions } = await engine();
    const invalid = await refusal(executions.start({ workflow: "OrderProcessing", input: { order_id: 1, amount: 1 } }));
    expect(invalid.message).toBe("input does not match OrderProcessing@1.0.0: /order_id must be string");

    const big = await refusal(executions.start({ workflow: "Other", input: { blob: "x".repeat(2 * 1024 * 1024) } }));
    expect(big.code).toBe("INVALID_ARGUMENT");
    expect(big.message).toBe("input is 2,097,163 bytes serialized; the limit is 1,048,576 bytes (1 MB)");

    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 64; i++) deep = deep.a = {};
    const tooDeep = await refusal(executions.start({ workflow: "Other", input: root }));
    expect(tooDeep.code).toBe("INVALID_ARGUMENT");
    expect(tooDeep.message).toMatch(/^input nests deeper than 64 levels/);

    let ok: Record<string, unknown> = {};
    const okRoot = ok;
    for (let i = 0; i < 63; i++) ok = ok.a = {};
    expect((await executions.start({ workflow: "Other", input: okRoot })).created).toBe(true);

    expect((await refusal(executions.start({ workflow: "Missing" }))).code).toBe("NOT_FOUND");
    expect((await executions.list()).executions).toHaveLength(1);
    expect(await db.store.countActiveExecutions()).toBe(1);
  });

  it("refuses starts beyond maxActiveExecutions with RESOURCE_EXHAUSTED, counting COMPENSATING too", async () => {
    const { executions } = await engine({ maxActiveExecutions: 2 });
    await executions.start({ executionId: "a", workflow: "Other" });
    await executions.start({ executionId: "b", workflow: "Other" });
    const full = await refusal(executions.start({ executionId: "c", workflow: "Other" }));
    expect(full.code).toBe("RESOURCE_EXHAUSTED");
    expect(full.message).toMatch(/2 executions are running, the most allowed \(--max-active-executions\) is 2/);
    expect(await db.store.getExecution("c")).toBeNull();
    // An existing id is still a no-op at the limit.
    expect((await executions.start({ executionId: "a", workflow: "Other" })).created).toBe(false);

    await db.store.updateExecution("a", { status: "COMPENSATING" });
    expect((await refusal(executions.start({ executionId: "c", workflow: "Other" }))).code).toBe("RESOURCE_EXHAUSTED");
    await executions.complete("b", { ok: true });
    expect((await executions.start({ executionId: "c", workflow: "Other" })).created).toBe(true);
  });

  it("cancels a pending execution at once, records the request on a held one, ignores finished ones", async () => {
    const { executions } = await engine();
    await executions.start({ executionId: "pending", workflow: "Other" });
    await executions.start({ executionId: "held", workflow: "Other" });
    await executions.start({ executionId: "done", workflow: "Other" });
    const task = await db.store.getTaskForExecution("held");
    await db.store.updateTask(task!.taskId, {
      state: "leased",
      leaseOwner: "worker-1",
      leaseUntilMs: clock.now() + 30_000,
    });
    await executions.complete("done", { total: 3 });
    clock.advance(1500);

    const cancelled = await executions.cancel("pending", { reason: "customer asked" });
    expect(cancelled).toMatchObject({ status: "CANCELLED", cancelReason: "customer asked", endedMs: clock.now() });
    expect((await executions.events("pending")).map((e) => [e.type, e.data])).toEqual([
      ["WorkflowCreated", { workflow: "Other", version: "2.0.0", input: {} }],
      ["CancelRequested", { reason: "customer asked" }],
      ["WorkflowCancelled", { reason: "customer asked" }],
    ]);
    expect((await db.store.getTaskForExecution("pending"))?.state).toBe("cancelled");
    expect(executionToJson(cancelled)).toMatchObject({
      ended_at: "2026-11-15T18:51:01.500Z",
      cancel_reason: "customer asked",
    });

    const held = await executions.cancel("held", { reason: "stop" });
    expect(held).toMatchObject({ status: "RUNNING", cancelReason: "stop", endedMs: null });
    expect((await executions.events("held")).map((e) => e.type)).toEqual(["WorkflowCreated", "CancelRequested"]);
    expect((await executions.cancel("held", { reason: "again" })).cancelReason).toBe("stop");
    expect(await executions.events("held")).toHaveLength(2);

    const done = await executions.cancel("done", { reason: "late" });
    expect(done).toMatchObject({ status: "COMPLETED", result: { total: 3 }, cancelReason: null });
    expect((await refusal(executions.cancel("missing"))).code).toBe("NOT_FOUND");
  });

  it("completes and fails only running executions", async () => {
    const { executions } = await engine();
    await executions.start({ executionId: "ok", workflow: "Other" });
    await executions.start({ executionId: "bad", workflow: "Other" });
    clock.advance(250);
    expect(await executions.complete("ok", { n: 1 })).toMatchObject({ status: "COMPLETED", endedMs: clock.now() });
    expect(await executions.fail("bad", { message: "boom" })).toMatchObject({
      status: "FAILED",
      error: { message: "boom" },
    });
    expect((await executions.events("bad")).map((e) => e.type)).toEqual(["WorkflowCreated", "WorkflowFailed"]);
    expect((await db.store.getTaskForExecution("ok"))?.state).toBe("done");
    const again = await refusal(executions.complete("ok", {}));
    expect(again.code).toBe("CONFLICT");
    expect(again.message).toBe("execution ok is COMPLETED; it cannot become COMPLETED");
    expect((await refusal(executions.fail("ok", {}))).code).toBe("CONFLICT");
  });

  it("lists newest first with filters and an opaque cursor that pages without gaps or repeats", async () => {
    const { executions } = await engine();
    const expected: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Two executions share each millisecond: the cursor must break the tie by id.
      for (const suffix of ["a", "b"]) {
        const id = `e${i}${suffix}`;
        await executions.start({
          executionId: id,
          workflow: i % 2 ? "Other" : "OrderProcessing",
          input: i % 2 ? {} : ORDER,
          scheduleId: i < 3 ? "s1" : null,
        });
        expected.unshift(id);
      }
      clock.advance(1000);
    }
    await executions.complete("e6b", {});

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await executions.list({ limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.executions.length).toBeLessThanOrEqual(3);
      seen.push(...page.executions.map((e) => e.executionId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(expected);

    const other = await executions.list({ workflow: "Other" });
    expect(other.executions.map((e) => e.executionId)).toEqual(["e5b", "e5a", "e3b", "e3a", "e1b", "e1a"]);
    expect(other.nextCursor).toBeNull();
    const fromSchedule = await executions.list({ schedule_id: "s1", workflow: "OrderProcessing" });
    expect(fromSchedule.executions.map((e) => e.executionId)).toEqual(["e2b", "e2a", "e0b", "e0a"]);
    expect((await executions.list({ status: "COMPLETED" })).executions.map((e) => e.executionId)).toEqual(["e6b"]);

    // Access control filters in the query: full pages of what the caller may read, cursors from them.
    const onlyOther = (w: string) => w === "Other";
    const visibleSeen: string[] = [];
    cursor = undefined;
    do {
      const page = await executions.list({ limit: 4, ...(cursor ? { cursor } : {}) }, undefined, onlyOther);
      visibleSeen.push(...page.executions.map((e) => e.executionId));
      if (page.nextCursor !== null) expect(page.executions).toHaveLength(4);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(visibleSeen).toEqual(other.executions.map((e) => e.executionId));
    expect(await executions.list({ workflow: "OrderProcessing" }, undefined, onlyOther)).toEqual({
      executions: [],
      nextCursor: null,
    });
    expect((await executions.list({}, undefined, () => false)).executions).toEqual([]);

    expect((await refusal(executions.list({ limit: 1001 }))).code).toBe("INVALID_ARGUMENT");
    expect((await refusal(executions.list({ status: "DONE" }))).message).toMatch(/status "DONE" is not one of/);
    expect((await refusal(executions.list({ cursor: "garbage" }))).message).toMatch(/not one this server issued/);
  });
});
