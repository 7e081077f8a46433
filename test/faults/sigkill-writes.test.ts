/**
 * SIGKILL under write bursts, on SQLite and on PostgreSQL (issue 11, "fault suite";
 * docs/security.md § Faults): a real server process on a SQLite file or a PostgreSQL schema is killed with SIGKILL four times while sixteen clients write
 * (create schedules, update them, start executions, each request with an Idempotency-Key and
 * retried with the same key until it is answered), and restarted. Then, read from the database:
 * every acknowledged write is there (each created schedule, each update's value, each started
 * execution under the id it was answered with), nothing is doubled (one execution per key, no
 * write refused on its retry), and two 1-second schedules fired every occurrence exactly once or
 * counted it skipped, and kept firing after each restart.
 *
 * The kills wait on events (so many acknowledged writes since the last restart), not on time; the
 * server's clock runs 10 times faster than real time on one timeline across its processes.
 */
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { ServerProcess } from "../../scripts/chaos/procs.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { freePort } from "../cluster/support.js";
import { childArgs } from "../helpers/child.js";
import { describeEachDialect, type TestLocation } from "../helpers/db.js";
import { accountsOf, settled } from "../scheduler/audit.js";

const ENTRY = fileURLToPath(new URL("./fixtures/fault-server.ts", import.meta.url));
const WRITERS = 16;
const OPS_PER_WRITER = 30;
const KILLS = 4;
const TICKS = ["tick-allow", "tick-skip"];

let server: ServerProcess | null = null;
let location: TestLocation | null = null;
afterEach(async () => {
  await server?.kill();
  server?.close();
  server = null;
  await location?.destroy();
  location = null;
});

interface Ack {
  status: number;
  body: { execution_id?: string; description?: string };
  replayed: boolean;
}

describeEachDialect("SIGKILL under write bursts", (dialect) => {
  it("every acknowledged write survives four SIGKILLs mid-burst, nothing doubles, schedules fire exactly once", async () => {
    location = await dialect.createLocation();
    const port = await freePort();
    server = new ServerProcess({
      database: "",
      schema: "",
      cluster: "single",
      port,
      nodeArgs: childArgs(ENTRY),
      env: {
        ...location.env,
        ORBIT_TEST_CLOCK_RATE: "10",
        ORBIT_TEST_CLOCK_BASE: String(parseInstant("2026-11-15T00:00:00Z")),
        ORBIT_TEST_CLOCK_ANCHOR: String(Date.now()),
      },
    });
    const url = server.url;
    await server.start();

    // The server's state as the writers see it: `up` resolves when it answers again.
    let up: Promise<void> = Promise.resolve();
    let acked = 0;
    const ackWaiters: { at: number; resolve: () => void }[] = [];
    const onAck = () => {
      acked++;
      for (const w of ackWaiters.splice(0)) {
        if (acked >= w.at) w.resolve();
        else ackWaiters.push(w);
      }
    };
    const acksReach = (n: number) => new Promise<void>((resolve) => ackWaiters.push({ at: n, resolve }));

    let retries = 0;
    const refused: string[] = [];
    /** Sends until answered (same Idempotency-Key each time); a refusal is recorded, not retried. */
    const send = async (method: string, path: string, body: unknown, key: string): Promise<Ack | null> => {
      for (;;) {
        await up;
        let res: Response;
        try {
          res = await fetch(url + path, {
            method,
            headers: { "content-type": "application/json", "idempotency-key": key },
            body: JSON.stringify(body),
          });
        } catch {
          retries++; // killed mid-request, or down: wait for the restart
          await new Promise((r) => setImmediate(r));
          continue;
        }
        const text = await res.text();
        if (res.status === 503) {
          retries++;
          continue;
        }
        if (res.status >= 400) {
          refused.push(`${method} ${path} (${key}): ${res.status} ${text}`);
          return null;
        }
        onAck();
        return {
          status: res.status,
          body: JSON.parse(text) as Ack["body"],
          replayed: res.headers.has("idempotent-replayed"),
        };
      }
    };

    let setup = 0;
    const admin = async (method: string, path: string, body: unknown) => {
      const r = await send(method, path, body, `setup-${++setup}`);
      expect(r).not.toBeNull();
    };
    for (const name of ["Burst", "Tick"]) await admin("POST", "/v1/workflows", { name, version: "1.0.0" });
    await admin("POST", "/v1/schedules", {
      schedule_id: "tick-allow",
      workflow: "Tick",
      interval: "1s",
      overlap: "allow",
    });
    await admin("POST", "/v1/schedules", {
      schedule_id: "tick-skip",
      workflow: "Tick",
      interval: "1s",
      overlap: "skip",
    });

    // What each writer was told.
    const created = new Set<string>();
    const lastDescription = new Map<string, string>();
    const started = new Map<string, string>(); // key → execution id
    let replays = 0;
    let killing = true;
    const writer = async (w: number) => {
      const mine: string[] = [];
      // At least OPS_PER_WRITER writes each, and on until the last kill: every kill lands mid-burst.
      for (let n = 0; n < OPS_PER_WRITER || killing; n++) {
        const key = `w${w}-${n}`;
        if (n % 3 === 0 || mine.length === 0) {
          const id = `s-${key}`;
          const a = await send(
            "POST",
            "/v1/schedules",
            { schedule_id: id, workflow: "Burst", interval: "1h", paused: true },
            key,
          );
          if (a) {
            created.add(id);
            mine.push(id);
            if (a.replayed) replays++;
          }
        } else if (n % 3 === 1) {
          const id = mine[n % mine.length] as string;
          const description = `v${n}`;
          const a = await send("PATCH", `/v1/schedules/${id}`, { description }, key);
          if (a) {
            expect(a.body.description).toBe(description);
            lastDescription.set(id, description);
            if (a.replayed) replays++;
          }
        } else {
          const a = await send("POST", "/v1/executions", { workflow: "Burst", input: { key } }, key);
          if (a) {
            started.set(key, a.body.execution_id as string);
            if (a.replayed) replays++;
          }
        }
      }
    };

    const writing = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    const firedAfterRestart: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      // Mid-burst: after another 60 acknowledged writes since the last restart.
      await acksReach(acked + 60);
      let markUp: () => void = () => undefined;
      up = new Promise<void>((r) => (markUp = r));
      await server.kill();
      await server.start();
      markUp();
      // Firing resumes after each restart: a new tick-allow occurrence is started.
      const before = (await (await fetch(`${url}/v1/schedules/tick-allow`)).json()) as { fired: number };
      for (;;) {
        const now = (await (await fetch(`${url}/v1/schedules/tick-allow`)).json()) as { fired: number };
        if (now.fired > before.fired) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      firedAfterRestart.push(k);
    }
    // Enough ticks to check below, however fast the kills went: a fast machine finished them in
    // under 20 s of ticking (the count below was once 18). Waits for the fires, not for time.
    for (;;) {
      let fired = 0;
      for (const id of TICKS)
        fired += ((await (await fetch(`${url}/v1/schedules/${id}`)).json()) as { fired: number }).fired;
      if (fired > 20) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    killing = false;
    await writing;
    await server.stop();

    expect(refused).toEqual([]);
    expect(firedAfterRestart).toHaveLength(KILLS);
    const store = await location.open();
    // Every acknowledged create and update, with the last value it was told.
    const schedules = await store.listSchedules({ limit: 10_000 });
    const burst = schedules.filter((s) => s.workflow === "Burst");
    expect(burst.map((s) => s.scheduleId).sort()).toEqual([...created].sort());
    for (const [id, description] of lastDescription) {
      expect({ id, description: (await store.getSchedule(id))?.spec.description }).toEqual({ id, description });
    }
    // Every acknowledged start, once, under the id it was answered with; no other execution.
    const executions = (await store.listExecutions({ workflow: "Burst", limit: 10_000 })).map((e) => ({
      id: e.executionId,
      key: (e.input as { key: string }).key,
    }));
    const byKey = new Map<string, string[]>();
    for (const e of executions) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e.id]);
    const doubled = [...byKey].filter(([, ids]) => ids.length > 1);
    expect(doubled).toEqual([]);
    expect(executions.length).toBe(started.size);
    for (const [key, id] of started) expect({ key, ids: byKey.get(key) }).toEqual({ key, ids: [id] });

    // The ticking schedules: every occurrence from the first to the last accounted exactly once,
    // and each started one has exactly one execution.
    let ticks = 0;
    for (const id of TICKS) {
      const accounts = settled(await accountsOf(store, id));
      const ids = new Set((await store.listExecutions({ scheduleId: id, limit: 100_000 })).map((e) => e.executionId));
      const startedOnes = [...accounts].filter(([, a]) => a === "started").map(([o]) => `${id}:${formatInstant(o)}`);
      expect(new Set(startedOnes)).toEqual(ids);
      const occurrences = [...accounts.keys()].sort((a, b) => a - b);
      for (let o = occurrences[0] as number; o <= (occurrences.at(-1) as number); o += 1000) {
        expect({ id, o: formatInstant(o), accounted: accounts.has(o) }).toEqual({
          id,
          o: formatInstant(o),
          accounted: true,
        });
      }
      ticks += ids.size;
    }
    console.log(
      `sigkill-writes [${dialect.name}]: ${KILLS} SIGKILLs, ${acked} acknowledged writes (${created.size} creates, ${lastDescription.size} schedules updated, ${started.size} starts), ${retries} retried sends, ${replays} answered by replay, ${ticks} tick executions`,
    );
    expect(ticks).toBeGreaterThan(20);
  }, 300_000);
});
