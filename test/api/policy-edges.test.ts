/**
 * The scheduling policies' edges as a user sees them over HTTP (issue 10): a real server with a
 * manual clock, on SQLite and (with ORBIT_TEST_DATABASE_URL) PostgreSQL where storage matters.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

/** The value of one sample of the metrics text, or null when the series is absent. */
function sample(text: string, series: string): number | null {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

async function metrics(t: TestServer): Promise<string> {
  return (await t.call("GET", "/metrics")).text;
}

const schemas: string[] = [];
/** A fresh PostgreSQL schema per server, so one test's executions never count against another's limit. */
async function pgOptions(): Promise<{ database: string; databaseSchema: string }> {
  const schema = `orbit_edges_${randomBytes(5).toString("hex")}`;
  await adminQuery(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  return { database: PG_URL as string, databaseSchema: schema };
}
const dialects = [
  { name: "sqlite", enabled: true, options: async () => ({}) },
  { name: "postgres", enabled: PG_URL !== undefined && PG_URL !== "", options: pgOptions },
];
afterAll(async () => {
  for (const schema of schemas) await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

for (const d of dialects) {
  describe.skipIf(!d.enabled)(`policy edges over HTTP [${d.name}]`, () => {
    it("item 9: 50 parallel triggers under allow are 50 distinct executions; under cancel_previous one survives", async () => {
      const t = await startTestServer(await d.options());
      try {
        await t.registerOrders();
        for (const overlap of ["allow", "cancel_previous"]) {
          const id = `t-${overlap.replace("_", "-")}-${d.name}`;
          const created = await t.call("POST", "/v1/schedules", {
            schedule_id: id,
            workflow: "OrderProcessing",
            interval: "1h",
            overlap,
            input: { order_id: "o" },
          });
          expect(created.status).toBe(201);
          // The manual clock stands still: every trigger has the same millisecond.
          const answers = await Promise.all(
            Array.from({ length: 50 }, () => t.call("POST", `/v1/schedules/${id}/trigger`, {})),
          );
          // Every answer is "started" — or, when the pool cannot hand out a connection in time on a
          // loaded machine, a retryable 503 that started nothing.
          const ids: string[] = [];
          for (const a of answers) {
            if (a.status === 503) expect(a.body.code).toBe("UNAVAILABLE");
            else {
              expect(a.body.started, a.text).toBe(true);
              ids.push(a.body.execution_id as string);
            }
          }
          expect(ids.length).toBeGreaterThan(d.name === "sqlite" ? 49 : 10);
          expect(new Set(ids).size).toBe(ids.length);
          const list = await t.call("GET", `/v1/executions?schedule_id=${id}&limit=100`);
          const executions = list.body.executions as Array<{ execution_id: string; status: string }>;
          expect(executions.map((e) => e.execution_id).sort()).toEqual([...ids].sort());
          const running = executions.filter((e) => e.status !== "CANCELLED");
          expect(running.length).toBe(overlap === "allow" ? ids.length : 1);
          expect((await t.call("GET", `/v1/schedules/${id}`)).body.fired).toBe(ids.length);
        }
      } finally {
        await t.stop();
      }
    });

    it("item 1: a 5 s schedule whose starts are refused shows in orbit_schedules_overdue and dead-letters, never stalls", async () => {
      const t = await startTestServer({ ...(await d.options()), maxActiveExecutions: 1 }, "2026-11-15T00:00:00.500Z");
      try {
        await t.registerOrders();
        const blocker = await t.call("POST", "/v1/executions", {
          workflow: "OrderProcessing",
          execution_id: `blocker-${d.name}`,
          input: { order_id: "b" },
        });
        expect(blocker.status).toBeLessThan(300);
        const id = `blocked-${d.name}`;
        expect(
          (
            await t.call("POST", "/v1/schedules", {
              schedule_id: id,
              workflow: "OrderProcessing",
              interval: "5s",
              input: { order_id: "o" },
            })
          ).status,
        ).toBe(201);
        expect(sample(await metrics(t), "orbit_schedules_overdue")).toBe(0);
        // The server's own loop fires: each second, wait until the schedule is no longer due.
        for (let s = 1; s <= 120; s++) {
          const now = Date.parse("2026-11-15T00:00:00Z") + s * 1000;
          t.clock.set(now);
          await t.until(
            async () => (await t.call("GET", `/v1/schedules/${id}`)).body.next_fire_at as string,
            (next) => Date.parse(next) > now,
            `${id} fired at ${new Date(now).toISOString()}`,
          );
        }
        const view = (await t.call("GET", `/v1/schedules/${id}`)).body;
        expect(view.fired).toBe(0);
        expect(view.skipped).toBeGreaterThan(15);
        expect(view.dead_letters.length).toBeGreaterThan(0);
        expect(Date.parse("2026-11-15T00:02:00Z") - Date.parse(view.next_fire_times[0])).toBeLessThanOrEqual(5000);
        const text = await metrics(t);
        expect(sample(text, "orbit_schedules_overdue")).toBe(1);
        // Every occurrence the schedule counts skipped is in the metric (its dead letters as missed).
        const reasons = ["overlap", "concurrency", "missed", "buffer_full"];
        const skippedTotal = reasons.reduce(
          (n, r) => n + (sample(text, `orbit_schedules_skipped_total{reason="${r}"}`) ?? 0),
          0,
        );
        expect(skippedTotal).toBe(view.skipped);
        // The search names the schedule the metric counts (docs/api.md: overdue=true).
        const overdue = (await t.call("GET", "/v1/schedules?overdue=true")).body;
        expect((overdue.schedules as Array<{ schedule_id: string }>).map((s) => s.schedule_id)).toEqual([id]);
      } finally {
        await t.stop();
      }
    });
  });
}

describe("settings and bodies a user gets wrong (items 7, 8, 11, 12)", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    await t.registerOrders();
  });
  afterAll(() => t.stop());

  const base = { workflow: "OrderProcessing", interval: "1m", input: { order_id: "o" } };

  it('item 7: "." and ".." are refused as schedule ids, nothing is created', async () => {
    for (const id of [".", ".."]) {
      const r = await t.call("POST", "/v1/schedules", { ...base, schedule_id: id });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(r.body.message).toContain('must not be "." or ".."');
    }
    expect((await t.call("GET", "/v1/schedules")).body.schedules).toEqual([]);
    expect((await t.call("POST", "/v1/schedules", { ...base, schedule_id: "a..b" })).status).toBe(201);
    expect((await t.call("DELETE", "/v1/schedules/a..b")).status).toBe(204);
  });

  it("item 8: secret references are refused anywhere in the input, nested, in any case, and as keys", async () => {
    const inputs = [
      { a: { b: ["ENV://X"] } },
      { a: { "env://KEY": 1 } },
      { "Vault://x": "y" },
      { a: [{ b: " secret://s" }] },
    ];
    for (const input of inputs) {
      const r = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "sec", input });
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.body.code).toBe("INVALID_ARGUMENT");
      expect(r.body.message).toContain("secret reference");
    }
    expect((await t.call("GET", "/v1/schedules/sec")).status).toBe(404);
  });

  it("item 11: the jobs product's names are refused with Orbit's in a \"did you mean\"", async () => {
    const r = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "al", overlap: "cancel_other" });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('did you mean "cancel_previous"?');
    // Kubernetes' and Temporal's values too, in their own case (they had no suggestion).
    for (const [setting, value, ours] of [
      ["overlap", "Forbid", "skip"],
      ["overlap", "TERMINATE_OTHER", "cancel_previous"],
      ["overlap", "ALLOW_ALL", "allow"],
      ["catchup", "latest", "run_once"],
    ]) {
      const foreign = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "al", [setting as string]: value });
      expect({ status: foreign.status, hint: foreign.body.message.endsWith(`did you mean "${ours}"?`) }).toEqual({
        status: 400,
        hint: true,
      });
    }
    // Names Object.prototype answers get no suggestion from its members.
    for (const [setting, value] of [
      ["overlap", "constructor"],
      ["catchup", "__proto__"],
      ["overlap", "toString"],
    ]) {
      const odd = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "al", [setting as string]: value });
      expect({ status: odd.status, message: odd.body.message }).toEqual({
        status: 400,
        message: expect.not.stringMatching(/native code|object Object|did you mean "function/),
      });
    }
    expect((await t.call("POST", "/v1/schedules", { ...base, schedule_id: "al" })).status).toBe(201);
    const p = await t.call("POST", "/v1/schedules/al/pause", { pause_note: "maintenance" });
    expect(p.status).toBe(400);
    expect(p.body.message).toContain('did you mean "note"?');
    expect((await t.call("GET", "/v1/schedules/al")).body.paused).toBe(false);
    expect((await t.call("POST", "/v1/schedules/al/pause", { note: "maintenance" })).body.pause_note).toBe(
      "maintenance",
    );
    // `null` unsets, as for every optional setting (`--unset pause_note`): the note was kept.
    const cleared = await t.call("PATCH", "/v1/schedules/al", { pause_note: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ paused: true });
    expect(cleared.body.pause_note ?? null).toBeNull();
    // A PATCH that does not name it keeps it.
    await t.call("PATCH", "/v1/schedules/al", { pause_note: "again" });
    expect((await t.call("PATCH", "/v1/schedules/al", { description: "x" })).body.pause_note).toBe("again");
    // So does a pause without a note of a schedule paused already (it erased it).
    expect((await t.call("POST", "/v1/schedules/al/pause", {})).body.pause_note).toBe("again");
    expect((await t.call("POST", "/v1/schedules/al/pause", { note: "other" })).body.pause_note).toBe("other");
  });

  it("item 12: catchup_window and jitter refusals share one code; skipped_total series exist from the start", async () => {
    for (const catchup_window of ["1y", "9s", "abc"]) {
      const r = await t.call("POST", "/v1/schedules", {
        ...base,
        schedule_id: "cw",
        catchup: "catch_up",
        max_catch_up: 2,
        catchup_window,
      });
      expect(r.status).toBe(400);
      expect(r.body.code, catchup_window).toBe("INVALID_ARGUMENT");
    }
    for (const jitter of ["1y", "2d"]) {
      const r = await t.call("POST", "/v1/schedules", { ...base, schedule_id: "j", jitter });
      expect(r.body.code, jitter).toBe("INVALID_ARGUMENT");
    }
    const text = await metrics(t);
    for (const reason of ["overlap", "concurrency", "missed", "buffer_full"]) {
      expect(sample(text, `orbit_schedules_skipped_total{reason="${reason}"}`), reason).toBe(0);
    }
  });

  it('item 12: "1 execution is running" under --max-active-executions 1', async () => {
    const one = await startTestServer({ maxActiveExecutions: 1 });
    try {
      await one.registerOrders();
      const first = await one.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: { order_id: "a" } });
      expect(first.status).toBeLessThan(300);
      const second = await one.call("POST", "/v1/executions", {
        workflow: "OrderProcessing",
        input: { order_id: "b" },
      });
      expect(second.status).toBe(429);
      expect(second.body.message).toMatch(/^1 execution is running, the most allowed/);
    } finally {
      await one.stop();
    }
  });
});
