/**
 * Creating many schedules at once (Schedules.createMany, applySchedules): one read of the ids that
 * exist and one insert per batch, all or none, refusing with the message the one-by-one loop gave,
 * on both dialects.
 */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { applySchedules } from "../../src/scheduler/apply.js";
import { insertAll } from "../../src/scheduler/schedules.js";
import { validateScheduleFile } from "../../src/scheduler/validate-file.js";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { schedule } from "../store/fixtures/records.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

const entry = (i: number) => ({
  schedule_id: `s-${i}`,
  workflow: "OrderProcessing",
  cron: "* * * * *",
  timezone: "UTC",
  input: ORDER_INPUT,
});
const bodies = (n: number) => Array.from({ length: n }, (_, i) => entry(i));

async function count(store: Store): Promise<number> {
  return (await store.listSchedules({ limit: 5000 })).length;
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OrbitError);
  return { code: (err as OrbitError).code, message: (err as OrbitError).message };
}

describeEachDialect("scheduler: creating many schedules", (dialect) => {
  const db = useStore(dialect);

  it("creates a batch of 1000 with one insert, each row as create() writes it", async () => {
    const h = await makeHarness(db.store);
    const ids = await h.scheduler.schedules.createMany(bodies(1000).map((body) => ({ body })));
    expect(ids).toEqual(bodies(1000).map((b) => b.schedule_id));
    const one = await h.scheduler.schedules.create({ ...entry(0), schedule_id: "single" });
    const stored = await h.scheduler.schedules.get("s-999");
    expect({ ...stored, schedule_id: "single" }).toEqual(one);
    expect(await count(db.store)).toBe(1001);
  });

  it("a batch with one invalid schedule creates none, naming it", async () => {
    const h = await makeHarness(db.store);
    const items = bodies(1000).map((body) => ({ body: body as Record<string, unknown> }));
    // Invalid only against the workflow's input schema: found inside the transaction, after the read.
    items[700] = { body: { ...entry(700), input: { ...ORDER_INPUT, amount: "a lot" } } };
    const err = await refusal(h.scheduler.schedules.createMany(items));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toMatch(/^schedules\[700\]: input does not match OrderProcessing@1\.0\.0: /);
    expect(await count(db.store)).toBe(0);
  });

  it("refuses the first of an existing id and a later invalid one, as the one-by-one loop did", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create(entry(5));
    const items = bodies(10).map((body) => ({ body: body as Record<string, unknown> }));
    items[8] = { body: { ...entry(8), workflow: "Nope" } };
    expect(await refusal(h.scheduler.schedules.createMany(items))).toEqual({
      code: "ALREADY_EXISTS",
      message: "schedules[5]: schedule s-5 already exists",
    });
    items[5] = { body: entry(50) };
    expect(await refusal(h.scheduler.schedules.createMany(items))).toEqual({
      code: "NOT_FOUND",
      message:
        "schedules[8]: workflow Nope is not registered: start a worker that runs it (a worker registers its workflows), or orbit workflow register Nope@<version>",
    });
    expect(await count(db.store)).toBe(1);
  });

  it("an id inserted after the batch read which ids exist refuses the whole insert", async () => {
    await db.store.insertSchedule(schedule("taken"));
    const refuse = (i: number, id: string) => new OrbitError("ALREADY_EXISTS", `schedules[${i}]: ${id} exists`);
    const err = await refusal(
      db.store.transaction((tx) => insertAll(tx, [schedule("a"), schedule("taken"), schedule("b")], refuse)),
    );
    expect(err).toEqual({ code: "ALREADY_EXISTS", message: "schedules[1]: taken exists" });
    expect(await db.store.getSchedule("a")).toBeNull();
  });

  it("apply: a file of 2,500 is one transaction; one invalid entry creates none", async () => {
    const h = await makeHarness(db.store);
    const { schedules } = h.scheduler;
    await schedules.create({ ...entry(3), cron: "*/5 * * * *" });
    const file: Record<string, unknown>[] = bodies(2500);
    file[2400] = { ...entry(2400), timezone: "Europe/Pariss" };
    const err = await refusal(applySchedules(schedules, { schedules: file }));
    expect(err.message).toMatch(/^schedules\[2400\] \(s-2400\): /);
    expect(await count(db.store)).toBe(1);
    expect((await schedules.row("s-3")).spec).toMatchObject({ cron: "*/5 * * * *" });

    file[2400] = entry(2400);
    const result = await applySchedules(schedules, { schedules: file, scope: { "orbit/owner": "bench" } });
    expect(result).toMatchObject({ created: 2499, updated: 1, unchanged: 0, deleted: 0 });
    expect(result.steps[3]).toMatchObject({ action: "update", schedule_id: "s-3" });
    expect(await count(db.store)).toBe(2500);
    const stored = await schedules.get("s-2499");
    expect(stored).toMatchObject({ schedule_id: "s-2499", labels: { "orbit/owner": "bench" }, state: "active" });
  });

  it("validate: a file of 2,500 checked with one read, as apply would write it; writes nothing", async () => {
    const h = await makeHarness(db.store);
    const { schedules } = h.scheduler;
    await schedules.create({ ...entry(7), cron: "*/5 * * * *" });
    const file: Record<string, unknown>[] = bodies(2500);
    const check = await validateScheduleFile(schedules, file);
    expect(check.actions).toHaveLength(2500);
    expect(check.actions[7]).toBe("update");
    expect(check.actions.filter((a) => a === "update")).toHaveLength(1);
    // An update is checked merged over the stored settings: the stored schedule's input stays valid.
    file[7] = { schedule_id: "s-7", workflow: "OrderProcessing", version: "9.9.9" };
    file[2000] = { ...entry(2000), input: { ...ORDER_INPUT, amount: "a lot" } };
    expect(await refusal(validateScheduleFile(schedules, file))).toEqual({
      code: "NOT_FOUND",
      message:
        "schedules[7] (s-7): workflow OrderProcessing@9.9.9 is not registered: start a worker that runs this version (a worker registers its workflows), or orbit workflow register OrderProcessing@9.9.9",
    });
    file[7] = entry(7);
    const bad = await refusal(validateScheduleFile(schedules, file));
    expect(bad.message).toMatch(/^schedules\[2000\] \(s-2000\): input does not match OrderProcessing@1\.0\.0: /);
    expect(await count(db.store)).toBe(1);
  });
});
