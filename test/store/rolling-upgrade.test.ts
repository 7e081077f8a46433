/**
 * A rolling upgrade of several servers on one PostgreSQL schema (docs/operations.md § Upgrade).
 *
 * "Old" servers run this code with the shipped migrations; the "new" release is this code with one
 * more migration (test/store/migration-dirs.ts: ADDITIVE_NEXT adds columns with defaults to the
 * tables every fire, start and lease writes, a table and an index). Each server is a store with its
 * own pool, engine and firing loop on its own manual clock, all in this process. While the servers
 * are rolled one by one, every occurrence of a schedule is started exactly once (the ledger and the
 * execution ids), executions started by old and new servers are leased and completed by servers of
 * the other release, and an old server restarted mid-roll starts beside the additive migration;
 * then a breaking migration makes a restarting older server refuse with the clear message.
 *
 * What this proves: the migrator's rule, and that this release's statements keep working on a
 * schema with a later additive migration applied. What it does not: that a later release's code
 * keeps its own promises on rows older servers wrote (the author of an additive migration answers
 * for that, docs/operations.md § Upgrade).
 */
import { afterEach, expect, it } from "vitest";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { loadMigrations } from "../../src/store/migrations.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { createSchema, describeCluster, dropSchema, query } from "../cluster/support.js";
import { PG_URL } from "../helpers/db.js";
import { type Harness, makeHarness, ORDER_INPUT } from "../scheduler/harness.js";
import { ADDITIVE_NEXT, BREAKING_NEXT, type MigrationDir, migrationDirWith, nextNumber } from "./migration-dirs.js";

const T0 = parseInstant("2026-11-15T10:00:00.000Z");
const MINUTE = 60_000;
const OFFER = [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }];

interface Server {
  name: string;
  release: "old" | "new";
  store: PostgresStore;
  h: Harness;
  tasks: WorkerTasks;
}

describeCluster("rolling upgrade of several servers [postgres]", () => {
  let schema = "";
  let servers: Server[] = [];
  const dirs: MigrationDir[] = [];
  afterEach(async () => {
    for (const s of servers) await s.store.close();
    servers = [];
    for (const d of dirs.splice(0)) d.remove();
    if (schema) await dropSchema(schema);
  });

  async function start(name: string, release: "old" | "new", migrationsDir?: string): Promise<Server> {
    const store = new PostgresStore({
      connectionString: PG_URL as string,
      searchPath: schema,
      maxConnections: 3,
      ...(migrationsDir !== undefined ? { migrationsDir } : {}),
    });
    try {
      await store.open();
    } catch (err) {
      await store.close();
      throw err;
    }
    const h = await makeHarness(store, { now: formatInstant(T0) });
    const { clock, executions, workflows } = h;
    const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
    const server = { name, release, store, h, tasks };
    servers.push(server);
    return server;
  }

  async function stop(server: Server): Promise<void> {
    servers = servers.filter((s) => s !== server);
    await server.store.close();
  }

  /** Every running server's firing loop at minute `m`, all at once; returns who advanced the schedule. */
  async function fireMinute(m: number): Promise<string[]> {
    const at = T0 + m * MINUTE + 100;
    const fired = await Promise.all(
      servers.map(async (s) => {
        s.h.clock.set(at);
        return (await s.h.scheduler.loop.fireDue()) > 0 ? s.name : null;
      }),
    );
    return fired.filter((n): n is string => n !== null);
  }

  /** A worker on `via` leases what is pending and completes it; returns the executions it completed. */
  async function completeVia(via: Server): Promise<string[]> {
    const leased = await via.tasks.claim({ worker_id: `worker-on-${via.name}`, workflows: OFFER, max_tasks: 100 });
    const answers = await via.tasks.completeMany(
      { workerId: `worker-on-${via.name}`, identity: null },
      leased.map((t) => ({ task_id: t.task_id, result: { completedBy: via.name } })),
    );
    expect(Object.values(answers).every((a) => "status" in a && a.status === "COMPLETED")).toBe(true);
    return leased.map((t) => t.execution_id);
  }

  const originOf = async (executionId: string): Promise<string> =>
    (
      await query<{ roll_origin: string }>(
        "SELECT roll_origin FROM orbit_executions WHERE execution_id = $1",
        [executionId],
        schema,
      )
    )[0]?.roll_origin ?? "";

  it("fires every occurrence once, completes every execution across releases, and restarts an old server mid-roll", async () => {
    schema = await createSchema();
    const next = nextNumber("postgres");
    const newRelease = migrationDirWith("postgres", { [`${next}_roll_additive.sql`]: ADDITIVE_NEXT });
    dirs.push(newRelease);
    const known = loadMigrations("postgres").length;

    // Two old servers; a schedule that starts every minute's occurrence (overlap allow).
    const oldA = await start("old-a", "old");
    const oldB = await start("old-b", "old");
    await oldA.h.scheduler.schedules.create({
      schedule_id: "roll",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
      input: ORDER_INPUT,
    });
    const firedBy: string[][] = [];
    firedBy.push(await fireMinute(1));
    // A worker on an old server before the migration: its connections prepare the lease statements.
    const early = await completeVia(oldA);

    // The first new server migrates the schema; the old ones keep running on it.
    const newC = await start("new-c", "new", newRelease.dir);
    expect(newC.store.newerMigrations).toEqual([]);
    expect(
      await query<{ version: number; additive: number }>(
        "SELECT version, additive FROM orbit_migrations WHERE version > $1 ORDER BY version",
        [known],
        schema,
      ),
    ).toEqual([{ version: known + 1, additive: 1 }]);
    firedBy.push(await fireMinute(2));
    firedBy.push(await fireMinute(3));
    // Executions started by old servers, completed by a worker on the new one.
    const byNew = await completeVia(newC);
    expect(byNew.length).toBe(2);

    // An old server restarts mid-roll (a crash, a deploy of another service): it starts, with a
    // warning, because the migration it does not know is recorded additive.
    await stop(oldB);
    const oldB2 = await start("old-b2", "old");
    expect(oldB2.store.newerMigrations).toEqual([{ version: known + 1, name: "roll_additive", additive: true }]);
    firedBy.push(await fireMinute(4));
    firedBy.push(await fireMinute(5));
    // Whichever server started them, a worker on an old server completes them.
    const byOld = await completeVia(oldA);
    expect(byOld.length).toBe(2);

    // The rest of the roll: each old server is replaced by a new one.
    await stop(oldA);
    const newA = await start("new-a", "new", newRelease.dir);
    firedBy.push(await fireMinute(6));
    await stop(oldB2);
    const newB = await start("new-b", "new", newRelease.dir);
    firedBy.push(await fireMinute(7));
    await completeVia(newB);

    // Exactly one server advanced the schedule each minute, and old and new servers both fired.
    expect(firedBy.map((names) => names.length)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(firedBy.flat().some((n) => n.startsWith("old"))).toBe(true);
    expect(
      firedBy
        .slice(1)
        .flat()
        .some((n) => n.startsWith("new")),
    ).toBe(true);

    // Every occurrence started exactly once: the ledger and the deterministic execution ids.
    const expected = [1, 2, 3, 4, 5, 6, 7].map((m) => `roll:${formatInstant(T0 + m * MINUTE)}`);
    const ledger = await newA.store.listOccurrences("roll", { limit: 100 });
    expect(ledger.every((o) => o.kind === "started" && o.count === 1)).toBe(true);
    expect(ledger.map((o) => o.executionId).sort()).toEqual(expected);
    const executions = await newA.store.listExecutions({ limit: 100 });
    expect(executions.map((e) => e.executionId).sort()).toEqual(expected);
    expect(executions.every((e) => e.status === "COMPLETED")).toBe(true);
    // Old servers' rows took the new column's default; each execution completed exactly once.
    expect(await originOf(expected[0] as string)).toBe("old");
    expect([...early, ...byNew, ...byOld].sort()).toEqual(expected.slice(0, 5));
  });

  it("an older server restarting after a breaking migration refuses, naming it", async () => {
    schema = await createSchema();
    const next = nextNumber("postgres");
    const breaking = migrationDirWith("postgres", { [`${next}_roll_breaking.sql`]: BREAKING_NEXT });
    dirs.push(breaking);
    const old = await start("old", "old");
    await start("new", "new", breaking.dir);
    await stop(old);
    await expect(start("old-again", "old")).rejects.toThrow(
      `the postgres database has migration ${next}_roll_breaking applied but this Orbit knows only up to ${Number(next) - 1}: it was written by a newer Orbit; upgrade Orbit to open it (${next}_roll_breaking is not recorded as additive`,
    );
  });
});
