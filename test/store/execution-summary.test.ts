/**
 * The executions list's summary (ExecutionFilter.summary, `GET /v1/executions?view=summary`):
 * the statement selects neither input nor result, which may be megabytes each (a tester's 900 KB
 * results made a page of 50 a 43 MB answer), and the records carry `{}` and null for them and
 * every other field as the full read has it.
 */
import { afterEach, expect, it } from "vitest";
import { execution, T0 } from "./fixtures/records.js";
import { caughtStore } from "./plan-capture.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it("selects no input or result, and reads the rest as the full list does", async () => {
  const { store, ran, close } = await caughtStore();
  cleanups.push(close);
  await store.insertExecutions(
    Array.from({ length: 3 }, (_, i) =>
      execution(`e-${i}`, {
        createdMs: T0 + i,
        status: "FAILED",
        input: { pad: "i".repeat(50_000) },
        result: { pad: "r".repeat(200_000) },
        error: { message: "declined", type: "PaymentError" },
        trigger: { type: "manual" },
        endedMs: T0 + 10,
      }),
    ),
  );
  const full = await store.listExecutions({ limit: 10 });
  const from = ran.length;
  const summary = await store.listExecutions({ limit: 10, summary: true });
  const statements = ran.slice(from).filter((r) => /FROM orbit_executions/.test(r.sql));
  expect(statements).toHaveLength(1);
  const selected = /SELECT (.*?) FROM/s.exec(statements[0]?.sql ?? "")?.[1] ?? "";
  const columns = selected.split(",").map((c) => c.trim());
  expect(columns).toContain("execution_id");
  expect(columns).toContain("error");
  expect(columns).not.toContain("input");
  expect(columns).not.toContain("result");
  expect(summary.map((e) => e.executionId)).toEqual(["e-2", "e-1", "e-0"]);
  expect(summary).toEqual(full.map((e) => ({ ...e, input: {}, result: null })));
});
