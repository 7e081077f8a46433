/**
 * Race suite (docs/security.md "Races"): concurrent creates, If-Match updates, triggers and
 * Idempotency-Keys, on one SQLite server, one PostgreSQL server and two `--cluster shared` servers
 * on one PostgreSQL schema (requests spread over both). Each race must end with one winner, the
 * losers refused with the documented code, never a 5xx and never a duplicate.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SystemClock } from "../../src/clock/system-clock.js";
import { type Answer, ORDER_INPUT, startTestServer, type TestServer } from "../api/helpers.js";
import { adminQuery, PG_URL } from "../helpers/db.js";

const schema = `orbit_race_${randomBytes(5).toString("hex")}`;
const setups: { name: string; enabled: boolean; start(): Promise<TestServer[]> }[] = [
  { name: "one SQLite server", enabled: true, start: async () => [await startTestServer()] },
  {
    name: "one PostgreSQL server",
    enabled: Boolean(PG_URL),
    start: async () => [await startTestServer({ database: PG_URL!, databaseSchema: `${schema}_a` })],
  },
  {
    name: "two shared-mode servers",
    enabled: Boolean(PG_URL),
    start: async () => {
      // The system clock: shared mode compares due times with the database's clock, which a
      // manual clock in 2026-11 would put weeks behind (every schedule overdue, firing at once).
      const options = {
        database: PG_URL!,
        databaseSchema: `${schema}_b`,
        cluster: "shared" as const,
        clock: new SystemClock(),
      };
      return [await startTestServer(options), await startTestServer(options)];
    },
  },
];

if (PG_URL) {
  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${schema}_a`);
    await adminQuery(`CREATE SCHEMA ${schema}_b`);
  });
  afterAll(async () => {
    await adminQuery(`DROP SCHEMA IF EXISTS ${schema}_a CASCADE`);
    await adminQuery(`DROP SCHEMA IF EXISTS ${schema}_b CASCADE`);
  });
}

const count = (answers: Answer[]) => {
  const by: Record<number, number> = {};
  for (const a of answers) by[a.status] = (by[a.status] ?? 0) + 1;
  return by;
};

for (const setup of setups) {
  describe.skipIf(!setup.enabled)(`races: ${setup.name}`, () => {
    let servers: TestServer[] = [];
    beforeAll(async () => {
      servers = await setup.start();
      await servers[0]!.registerOrders();
    });
    afterAll(async () => {
      for (const s of servers) await s.stop();
    });
    /** n requests at once, spread over the servers. */
    const race = (n: number, send: (t: TestServer, i: number) => Promise<Answer>) =>
      Promise.all(Array.from({ length: n }, (_, i) => send(servers[i % servers.length]!, i)));
    const schedule = (id: string) => ({
      schedule_id: id,
      workflow: "OrderProcessing",
      interval: "1h",
      input: ORDER_INPUT,
    });

    it("50 creates of one schedule id: one 201, 49 × 409 ALREADY_EXISTS", async () => {
      const answers = await race(50, (t) => t.call("POST", "/v1/schedules", schedule("race-create")));
      expect(count(answers)).toEqual({ 201: 1, 409: 49 });
      expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === "ALREADY_EXISTS")).toBe(true);
    });

    it("50 updates with one If-Match: one 200, 49 × 412 PRECONDITION_FAILED", async () => {
      const created = await servers[0]!.call("POST", "/v1/schedules", schedule("race-update"));
      const etag = created.headers.get("etag")!;
      const answers = await race(50, (t, i) =>
        t.call("PATCH", "/v1/schedules/race-update", { interval: `${i + 2}h` }, { "if-match": etag }),
      );
      expect(count(answers)).toEqual({ 200: 1, 412: 49 });
      const after = await servers[0]!.call("GET", "/v1/schedules/race-update");
      expect(after.body.revision).toBe(created.body.revision + 1);
    });

    it("50 triggers (overlap allow): every started answer is an execution that exists, none twice", async () => {
      await servers[0]!.call("POST", "/v1/schedules", { ...schedule("race-trigger"), overlap: "allow" });
      const answers = await race(50, (t) => t.call("POST", "/v1/schedules/race-trigger/trigger", {}));
      expect(Object.keys(count(answers)).every((s) => Number(s) < 300)).toBe(true);
      const started = answers.filter((a) => a.body.started === true);
      expect(started.length).toBeGreaterThan(0);
      const ids = new Set(started.map((a) => a.body.execution_id as string));
      const list = await servers[0]!.call("GET", "/v1/executions?schedule_id=race-trigger&limit=1000");
      expect(new Set(list.body.executions.map((e: { execution_id: string }) => e.execution_id))).toEqual(ids);
    });

    it("triggers of schedules sharing a concurrency key at once, ten rounds: one holds the key each round", async () => {
      // Nothing runs them (no worker), so a started execution holds the key until cancelled. Each
      // trigger checked who held the key in its own transaction: on PostgreSQL two of them both
      // saw nobody and both started (docs/scheduling.md § Concurrency keys).
      const ids = ["race-key-a", "race-key-b", "race-key-c", "race-key-d"];
      for (const id of ids)
        await servers[0]!.call("POST", "/v1/schedules", { ...schedule(id), concurrency_key: "race-shared" });
      for (let round = 0; round < 10; round++) {
        const answers = await race(ids.length * 2, (t, i) =>
          t.call("POST", `/v1/schedules/${ids[i % ids.length]}/trigger`, {}),
        );
        // 201 for the one started, 200 for each not started.
        expect(count(answers)).toEqual({ 200: ids.length * 2 - 1, 201: 1 });
        const started = answers.filter((a) => a.body.started === true).map((a) => a.body.execution_id as string);
        const running = await servers[0]!.call(
          "GET",
          "/v1/executions?workflow=OrderProcessing&status=RUNNING&limit=100",
        );
        const holders = running.body.executions.filter((e: { schedule_id: string | null }) =>
          ids.includes(e.schedule_id ?? ""),
        );
        expect({ round, started: started.length, holders: holders.length }).toEqual({ round, started: 1, holders: 1 });
        for (const e of holders)
          await servers[0]!.call("POST", `/v1/executions/${encodeURIComponent(e.execution_id)}/cancel`, {});
      }
    });

    it("20 starts with one Idempotency-Key, five rounds: one execution each round", async () => {
      for (let round = 0; round < 5; round++) {
        const key = `race-key-${round}`;
        const answers = await race(20, (t) =>
          t.call(
            "POST",
            "/v1/executions",
            { workflow: "OrderProcessing", input: ORDER_INPUT },
            { "idempotency-key": key },
          ),
        );
        expect(count(answers)).toEqual({ 201: 20 });
        const ids = new Set(answers.map((a) => a.body.execution_id));
        expect(ids.size).toBe(1);
        expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true").length).toBe(19);
      }
    });
  });
}
