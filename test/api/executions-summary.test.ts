/**
 * `GET /v1/executions?view=summary` (docs/api.md § Executions): each execution without its input
 * and result, its error's type, message (cut to 1,000 characters, `truncated: true`) and step; the
 * same executions and cursors as the full view, which stays the default; an unknown view is 400.
 * A tester's 50 executions with a 900 KB result each made a page a 43 MB answer, which the web UI
 * read every few seconds to show ids and statuses. On SQLite, and on PostgreSQL when
 * ORBIT_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL } from "../helpers/db.js";
import { startDialectServer, type TestServer } from "./helpers.js";

if (!PG_URL)
  console.warn("skipped: test/api/executions-summary.test.ts on PostgreSQL: ORBIT_TEST_DATABASE_URL is not set");

const dialects = [
  { name: "sqlite" as const, enabled: true },
  { name: "postgres" as const, enabled: PG_URL !== undefined },
];

type Json = Record<string, unknown>;

const RESULT = { report: "r".repeat(300_000) };
const LONG = `declined: ${"é".repeat(2990)}`;

describe.each(dialects)("the executions list's summary view on $name", ({ name, enabled }) => {
  let t: TestServer;
  const ids = { done: "", long: "", short: "" };

  beforeAll(async () => {
    if (!enabled) return;
    t = await startDialectServer(name, "orbit_summary");
    await t.ok("POST", "/v1/workflows", { name: "Report", version: "1.0.0" });
    for (let i = 0; i < 7; i++) {
      await t.ok("POST", "/v1/executions", {
        execution_id: `x-${i}`,
        workflow: "Report",
        input: { pad: "i".repeat(100_000), i },
      });
      // Two of them at one instant: the cursor orders ties by id.
      if (i % 2 === 1) t.clock.advance(1000);
    }
    const offer = [{ name: "Report", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }];
    const { tasks } = await t.ok("POST", "/v1/worker/poll", {
      worker_id: "w",
      workflows: offer,
      max_tasks: 3,
      wait_ms: 0,
    });
    const [done, long, short] = tasks as { task_id: string; execution_id: string }[];
    if (!done || !long || !short) throw new Error("three tasks expected");
    Object.assign(ids, { done: done.execution_id, long: long.execution_id, short: short.execution_id });
    await t.ok("POST", `/v1/worker/tasks/${done.task_id}/complete`, { worker_id: "w", result: RESULT });
    await t.ok("POST", `/v1/worker/tasks/${long.task_id}/fail`, {
      worker_id: "w",
      error: { message: LONG, type: "PaymentError", step: "charge", stack: "s".repeat(20_000), code: 7 },
      retryable: false,
    });
    await t.ok("POST", `/v1/worker/tasks/${short.task_id}/fail`, {
      worker_id: "w",
      error: { message: "card declined", type: "PaymentError", stack: "at charge" },
      retryable: false,
    });
  }, 60_000);
  afterAll(async () => {
    if (enabled) await t.stop();
  });

  it.skipIf(!enabled)("leaves out input and result, and keeps every other field as the full view has it", async () => {
    const full = (await t.ok("GET", "/v1/executions")).executions as Json[];
    const summary = (await t.ok("GET", "/v1/executions?view=summary")).executions as Json[];
    expect(full).toHaveLength(7);
    expect(summary.map((e) => e.execution_id)).toEqual(full.map((e) => e.execution_id));
    expect(full.find((e) => e.execution_id === ids.done)?.result).toEqual(RESULT);
    for (const [i, e] of summary.entries()) {
      expect(e).not.toHaveProperty("input");
      expect(e).not.toHaveProperty("result");
      const { input: _input, result: _result, error: fullError, ...rest } = full[i] as Json;
      const { error, ...same } = e;
      expect(same).toEqual(rest);
      expect(error === null).toBe(fullError === null);
    }
    // view=full is the default, named.
    expect((await t.ok("GET", "/v1/executions?view=full")).executions).toEqual(full);
  });

  it.skipIf(!enabled)("keeps an error's type, message and step, the message cut to 1,000 characters", async () => {
    const summary = (await t.ok("GET", "/v1/executions?view=summary")).executions as Json[];
    const byId = (id: string) => summary.find((e) => e.execution_id === id);
    expect(byId(ids.short)?.error).toEqual({ type: "PaymentError", message: "card declined" });
    expect(byId(ids.long)?.error).toEqual({
      type: "PaymentError",
      message: `${LONG.slice(0, 1000)}… (${LONG.length - 1000} more characters)`,
      step: "charge",
      truncated: true,
    });
    expect(byId(ids.done)?.error).toBeNull();
    // The execution itself still has all of it.
    const whole = await t.ok("GET", `/v1/executions/${ids.long}`);
    expect(whole.error).toMatchObject({ message: LONG, code: 7 });
  });

  it.skipIf(!enabled)("pages with the same cursors as the full view", async () => {
    const walk = async (view: string) => {
      const pages: { ids: unknown[]; cursor: string | null }[] = [];
      let cursor: string | null = null;
      do {
        const after: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
        const page = await t.ok("GET", `/v1/executions?workflow=Report&limit=2${view}${after}`);
        cursor = page.next_cursor;
        pages.push({ ids: (page.executions as Json[]).map((e) => e.execution_id), cursor });
      } while (cursor !== null);
      return pages;
    };
    const full = await walk("");
    expect(full).toHaveLength(4);
    expect(await walk("&view=summary")).toEqual(full);
  });

  it.skipIf(!enabled)("refuses a view it does not know, naming the ones it does", async () => {
    const r = await t.call("GET", "/v1/executions?view=compact");
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("INVALID_ARGUMENT");
    expect(r.body.message).toMatch(/view/);
    expect(r.body.message).toMatch(/summary/);
  });
});
