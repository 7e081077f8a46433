/**
 * Fault suite, PostgreSQL restart (issue 11; docs/security.md § Faults, docs/testing.md § Fault
 * suite): a real server process on a private PostgreSQL cluster (test/helpers/private-postgres.ts),
 * two 1-second schedules firing, a worker (the SDK, in the test's process) running their
 * executions and six clients writing (schedule creates, triggers, starts). PostgreSQL is restarted
 * (`pg_ctl restart -m fast`), then stopped for a few seconds and started again. The server must
 * stay up the whole time; answer only 2xx or 503 UNAVAILABLE in the `{code, message}` shape, and
 * answer every request; report not-ready on /readyz while the database is down and ready after;
 * keep every write it acknowledged; and fire again by itself, every occurrence across both outages
 * accounted for exactly once in the ledger (the catch_up schedule starts each one, the skip_missed
 * one starts it or records it missed), one execution per started occurrence. The worker reconnects,
 * its completions sent during the outage are retried rather than lost, and it runs the executions
 * started after.
 *
 * Events drive it (so many acknowledged writes, a fire, an answer of /readyz); the one wait on real
 * time is the stopped database's few seconds, so that whole occurrences fall inside the outage.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { SERVER_ENTRY, ServerProcess } from "../../scripts/chaos/procs.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { formatInstant } from "../../src/time/format.js";
import { freePort } from "../cluster/support.js";
import { childArgs } from "../helpers/child.js";
import { PrivatePostgres } from "../helpers/private-postgres.js";
import { accountsOf, settled } from "../scheduler/audit.js";

const TITLE = "fault: PostgreSQL restarts and stops under a firing server and writing clients";
const SCHEMA = "orbit_restart";
const WRITERS = 6;
/** Acknowledged writes to wait for in each phase: the load is on before and after every outage. */
const ACKS_PER_PHASE = 60;
/** How long the database stays stopped: long enough for whole 1-second occurrences to fall inside. */
const STOPPED_MS = 3000;
const TICKS = { "tick-catch": ["started"], "tick-skip": ["started", "skipped:missed"] } as const;

const cluster = await PrivatePostgres.start();
const skip = typeof cluster === "string" ? cluster : null;
if (skip !== null) console.warn(`skipped: "${TITLE}": ${skip}`);

describe.skipIf(skip !== null)(skip === null ? TITLE : `${TITLE} — skipped: ${skip}`, () => {
  const pgc = cluster as PrivatePostgres;
  let logDir: string | null = null;
  let server: ServerProcess | null = null;
  let worker: Worker | null = null;
  let releaseHeld: () => void = () => undefined;
  let writing = true;
  afterAll(async () => {
    writing = false;
    // After a failure midway: let the worker's held runs and their reports finish before closing.
    releaseHeld();
    if (!pgc.running) await pgc.startAgain().catch(() => undefined);
    await worker?.close();
    await server?.stop();
    server?.close();
    await pgc.destroy();
    if (logDir !== null) rmSync(logDir, { recursive: true, force: true });
  });

  const admin = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: pgc.url, options: `-c search_path=${SCHEMA}` });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };

  it("stays up, answers 2xx or 503, is not ready while the database is down, keeps every acknowledged write, fires every occurrence once", async () => {
    await admin(`CREATE SCHEMA ${SCHEMA}`);
    logDir = mkdtempSync(join(tmpdir(), "orbit-pg-restart-"));
    const logFile = join(logDir, "server.log");
    server = new ServerProcess({
      database: pgc.url,
      schema: SCHEMA,
      cluster: "single",
      port: await freePort(),
      // A short grace, so that occurrences inside the outage are missed (catch-up decides them).
      graceMs: 1000,
      logFile,
      nodeArgs: childArgs(SERVER_ENTRY),
    });
    await server.start();
    const url = server.url;

    interface Answer {
      status: number;
      body: { code?: string; message?: string; execution_id?: string; started?: boolean; fired?: number };
    }
    /** Every request is answered: a dropped or hung connection is recorded as status 0. */
    const send = async (method: string, path: string, body?: unknown): Promise<Answer> => {
      try {
        const res = await fetch(url + path, {
          method,
          headers: method === "GET" ? {} : { "content-type": "application/json" },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        return { status: res.status, body: text === "" ? {} : JSON.parse(text) };
      } catch (err) {
        return { status: 0, body: { message: String(err) } };
      }
    };
    const must = async (method: string, path: string, body?: unknown): Promise<Answer> => {
      const a = await send(method, path, body);
      if (a.status < 200 || a.status >= 300)
        throw new Error(`${method} ${path}: ${a.status} ${JSON.stringify(a.body)}`);
      return a;
    };
    /** Polls `read` until `check` holds (an event of the server's), giving up after 30 s with `what`. */
    const until = async <T>(read: () => Promise<T>, check: (v: T) => boolean, what: string): Promise<T> => {
      const end = Date.now() + 30_000;
      for (;;) {
        const v = await read();
        if (check(v)) return v;
        if (!server?.running)
          throw new Error(`the server process exited:\n${readFileSync(logFile, "utf8").slice(-4000)}`);
        if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    await must("POST", "/v1/workflows", { name: "Burst", version: "1.0.0" });
    // The worker: Tick returns at once, except while `hold` is set: then it waits for the database
    // to be stopped, so that its report meets the outage and must be retried, not lost.
    const ran = new Map<string, number>(); // execution id → runs
    let hold: { released: Promise<void>; held: Set<string> } | null = null;
    const Tick = defineWorkflow({
      name: "Tick",
      version: "1.0.0",
      async run(ctx) {
        ran.set(ctx.executionId, (ran.get(ctx.executionId) ?? 0) + 1);
        if (hold !== null) {
          hold.held.add(ctx.executionId);
          await hold.released;
        }
        return { ok: true };
      },
    });
    const workerLog: string[] = [];
    const logger = {
      info: () => undefined,
      warn: (m: string, f?: object) => workerLog.push(`warn ${m} ${JSON.stringify(f)}`),
      error: (m: string, f?: object) => workerLog.push(`error ${m} ${JSON.stringify(f)}`),
    };
    worker = new Worker({ server: url, workflows: [Tick], logger, concurrency: 20 });
    const working = worker.run();
    await until(
      async () => (await send("GET", "/v1/workflows/Tick")).status,
      (s) => s === 200,
      "the worker to register Tick",
    );
    for (const [id, catchup] of [
      ["tick-catch", { catchup: "catch_up", max_catch_up: 100 }],
      ["tick-skip", { catchup: "skip_missed" }],
    ] as const)
      await must("POST", "/v1/schedules", {
        schedule_id: id,
        workflow: "Tick",
        interval: "1s",
        overlap: "allow",
        ...catchup,
      });

    // The writers, and what they were told.
    let phase = "before";
    const statuses = new Map<string, number>(); // `${phase} ${status}` → count
    const unexpected: string[] = [];
    const created: string[] = [];
    const started: string[] = [];
    const triggered: string[] = [];
    let acked = 0;
    let refusedAsUnavailable = 0;
    const record = (what: string, a: Answer): boolean => {
      const key = `${phase} ${a.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (a.status >= 200 && a.status < 300) {
        acked++;
        return true;
      }
      if (a.status === 503 && a.body.code === "UNAVAILABLE" && typeof a.body.message === "string") {
        refusedAsUnavailable++;
        return false;
      }
      unexpected.push(`${phase}: ${what}: ${a.status} ${JSON.stringify(a.body)}`);
      return false;
    };
    /** A client's request: after a 503 (or no answer) it waits a little before its next one, as a real client would. */
    const write = async (method: string, path: string, body: unknown): Promise<Answer> => {
      const a = await send(method, path, body);
      if (a.status === 503 || a.status === 0) await new Promise((r) => setTimeout(r, 20));
      return a;
    };
    const writer = async (w: number) => {
      let mine: string | null = null;
      for (let n = 0; writing; n++) {
        const id = `w${w}-${n}`;
        if (mine === null || n % 3 === 0) {
          const body = { schedule_id: `s-${id}`, workflow: "Burst", interval: "1h", paused: true, overlap: "allow" };
          if (record(`create s-${id}`, await write("POST", "/v1/schedules", body))) {
            created.push(`s-${id}`);
            mine = `s-${id}`;
          }
        } else if (n % 3 === 1) {
          const a = await write("POST", `/v1/schedules/${mine}/trigger`, {});
          if (record(`trigger ${mine}`, a)) {
            if (a.body.started === true) triggered.push(a.body.execution_id as string);
            else unexpected.push(`trigger ${mine} did not start: ${JSON.stringify(a.body)}`);
          }
        } else {
          const body = { execution_id: `e-${id}`, workflow: "Burst", input: { n } };
          if (record(`start e-${id}`, await write("POST", "/v1/executions", body))) started.push(`e-${id}`);
        }
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));

    const fired = async (id: string) => (await send("GET", `/v1/schedules/${id}`)).body.fired ?? -1;
    /** After an outage: ready, writes acknowledged again, a fresh fire, and the worker runs it. */
    const recovered = async (what: string, since: number) => {
      const ready = await until(
        () => send("GET", "/readyz"),
        (a) => a.status === 200,
        `/readyz ready after the ${what}`,
      );
      expect(ready.body).toMatchObject({ status: "ready", role: "single" });
      const ackedBefore = acked;
      await until(
        async () => acked,
        (n) => n >= ackedBefore + ACKS_PER_PHASE,
        `writes acknowledged after the ${what}`,
      );
      const firedBefore = await fired("tick-catch");
      await until(
        () => fired("tick-catch"),
        (n) => n > firedBefore + 1,
        `tick-catch to fire after the ${what}`,
      );
      // An execution of an occurrence after the database came back, run by the worker.
      await until(
        async () => [...ran.keys()].some((id) => id.startsWith("tick-catch:") && Date.parse(id.slice(11)) > since),
        (yes) => yes,
        `the worker to run an execution started after the ${what}`,
      );
    };

    await until(
      async () => acked,
      (n) => n >= ACKS_PER_PHASE,
      "the first acknowledged writes",
    );
    await until(
      () => fired("tick-catch"),
      (n) => n >= 2,
      "the first fires",
    );

    // 1. A restart.
    phase = "restart";
    const restartAt = Date.now();
    await pgc.restart();
    const restartedAt = Date.now();
    await recovered("restart", restartedAt);

    // 2. A stop of a few seconds, then a start.
    const released = new Promise<void>((r) => (releaseHeld = r));
    const held = new Set<string>();
    hold = { released, held };
    await until(
      async () => held.size,
      (n) => n > 0,
      "the worker to hold an execution",
    );
    phase = "stopped";
    const unavailableBefore = refusedAsUnavailable;
    await pgc.stop();
    const stoppedAt = Date.now();
    const notReady = await until(
      () => send("GET", "/readyz"),
      (a) => a.status !== 200,
      "/readyz not ready while PostgreSQL is stopped",
    );
    expect(notReady).toMatchObject({
      status: 503,
      body: { status: "not_ready", message: expect.stringMatching(/database/) },
    });
    expect((await send("GET", "/healthz")).status).toBe(200);
    await until(
      async () => refusedAsUnavailable,
      (n) => n >= unavailableBefore + 10,
      "writes refused with 503 while PostgreSQL is stopped",
    );
    const read = await send("GET", "/v1/schedules/tick-catch");
    expect(read).toMatchObject({ status: 503, body: { code: "UNAVAILABLE", message: expect.any(String) } });
    // The held executions end now: their completions are sent while the database is down.
    hold = null;
    releaseHeld();
    const left = stoppedAt + STOPPED_MS - Date.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    phase = "start";
    await pgc.startAgain();
    const startedAt = Date.now();
    await recovered("stop and start", startedAt);

    phase = "after";
    writing = false;
    await writers;
    await worker.close();
    await working;
    worker = null;
    expect(server.running).toBe(true);
    await server.stop();
    expect({ unexpectedExits: server.unexpectedExits }).toEqual({ unexpectedExits: 0 });

    const answers = Object.fromEntries([...statuses].sort());
    const serverLog = readFileSync(logFile, "utf8");
    expect(unexpected, `server log:\n${serverLog.slice(-4000)}`).toEqual([]);
    // A dropped idle connection is logged as its error, not with the whole pg client pg-pool hangs on it.
    expect(serverLog).not.toContain("parsedStatements");
    expect(statuses.get("stopped 503") ?? 0).toBeGreaterThan(0);

    // Every execution the worker ran was completed by its one run: no report was lost to the outage.
    const notCompleted = await admin<{ id: string; status: string }>(
      "SELECT execution_id AS id, status FROM orbit_executions WHERE execution_id = ANY($1) AND status <> 'COMPLETED'",
      [[...ran.keys()]],
    );
    const runTwice = [...ran].filter(([, n]) => n > 1);
    expect({ held: held.size, notCompleted, runTwice }, `worker log:\n${workerLog.join("\n")}`).toEqual({
      held: held.size,
      notCompleted: [],
      runTwice: [],
    });

    // Every acknowledged write is there.
    const present = async (table: string, column: string, ids: string[]) => {
      const rows = await admin<{ id: string }>(`SELECT ${column} AS id FROM ${table} WHERE ${column} = ANY($1)`, [ids]);
      const found = new Set(rows.map((r) => r.id));
      return ids.filter((id) => !found.has(id));
    };
    expect(await present("orbit_schedules", "schedule_id", created)).toEqual([]);
    expect(await present("orbit_executions", "execution_id", [...started, ...triggered])).toEqual([]);

    // Every occurrence from the first to the last, across both outages, accounted for exactly once.
    const store = new PostgresStore({ connectionString: pgc.url, searchPath: SCHEMA, maxConnections: 2 });
    await store.open();
    const accounted: Record<string, Record<string, number>> = {};
    try {
      for (const [id, allowed] of Object.entries(TICKS)) {
        const accounts = settled(await accountsOf(store, id)); // throws on an occurrence accounted twice
        const occurrences = [...accounts.keys()].sort((a, b) => a - b);
        const first = occurrences[0] as number;
        const last = occurrences.at(-1) as number;
        expect({ id, first: first < restartAt, last: last > startedAt }).toEqual({ id, first: true, last: true });
        const counts: Record<string, number> = {};
        for (let o = first; o <= last; o += 1000) {
          const account = accounts.get(o) ?? "not accounted";
          counts[account] = (counts[account] ?? 0) + 1;
          expect({ id, o: formatInstant(o), allowed: (allowed as readonly string[]).includes(account) }).toEqual({
            id,
            o: formatInstant(o),
            allowed: true,
          });
        }
        // One execution per started occurrence, under its occurrence's id, and no other.
        const executions = (await store.listExecutions({ scheduleId: id, limit: 100_000 })).map((e) => e.executionId);
        const startedIds = [...accounts].filter(([, a]) => a === "started").map(([o]) => `${id}:${formatInstant(o)}`);
        expect(executions.sort()).toEqual(startedIds.sort());
        accounted[id] = counts;
      }
    } finally {
      await store.close();
    }
    // The outage produced missed occurrences that the skip_missed schedule recorded.
    expect(accounted["tick-skip"]?.["skipped:missed"] ?? 0).toBeGreaterThan(0);

    console.log(
      `pg-restart: 1 restart (-m fast) + 1 stop of ${STOPPED_MS / 1000} s; ${acked} acknowledged writes ` +
        `(${created.length} creates, ${triggered.length} triggers, ${started.length} starts), all stored; ` +
        `${refusedAsUnavailable} answered 503 UNAVAILABLE; answers by phase ${JSON.stringify(answers)}; ` +
        `occurrences ${JSON.stringify(accounted)}; worker ran ${ran.size} executions (${held.size} completed while PostgreSQL was stopped)`,
    );
  }, 90_000);
});
