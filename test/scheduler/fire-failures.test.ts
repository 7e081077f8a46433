/**
 * A fire whose writes keep failing in the database while reads still work (a full disk, a trigger
 * refusing the insert) pauses the firing loop for a second between tries instead of retrying at
 * once: it used to spin a core and log 1,300 lines a second. Repeated failures of the same schedule
 * are logged once a minute, with how many were held back. The occurrence stays due and fires once
 * the writes work again (src/scheduler/loop.ts, docs/operations.md § A full disk).
 */
import { afterEach, describe, expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import type { Store } from "../../src/store/store.js";
import { sqliteDialect, useStore } from "../helpers/db.js";
import { logLines } from "../helpers/log-lines.js";
import { type Harness, makeHarness } from "./harness.js";

/** `store` whose fire transactions (urgent) fail like a full disk while `full.on`; counts them. */
function fillable(store: Store, full: { on: boolean; attempts: number }): Store {
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop === "transaction") {
        return (fn: (tx: unknown) => Promise<unknown>, options?: { urgent?: boolean }) => {
          if (!options?.urgent) return (target.transaction as (...a: unknown[]) => Promise<unknown>)(fn, options);
          full.attempts++;
          // The reads work; the writes fail at the end, and the transaction rolls back.
          return (target.transaction as (...a: unknown[]) => Promise<unknown>)(async (tx: unknown) => {
            const result = await fn(tx);
            if (full.on) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
            return result;
          }, options);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Waits (in turns of the event loop, 5 s at most) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited > 5000) throw new Error("timed out waiting");
    await turns(5);
  }
}

/** Lets the loop run on the event loop for `ms` of wall time (the manual clock stands still). */
const turns = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `store` whose transactions and due reads fail, as a whole round does, with what `failure()` gives (null: they run). */
function failingRounds(store: Store, failure: () => Error | null): Store {
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop !== "transaction" && prop !== "nextDueMs") return value.bind(target);
      return (...args: unknown[]) => {
        const err = failure();
        return err === null ? (value as (...a: unknown[]) => unknown).apply(target, args) : Promise.reject(err);
      };
    },
  }) as Store;
}

describe("fires that fail in the database [sqlite]", () => {
  const db = useStore(sqliteDialect);
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.scheduler.close();
    h = null;
  });

  it("are tried once a second, logged once, and fire when the writes work again", async () => {
    const full = { on: false, attempts: 0 };
    const errors: Array<{ msg: string; repeated?: number }> = [];
    const warnings: string[] = [];
    const log = {
      warn: (_: object, msg: string) => void warnings.push(msg),
      error: (obj: { repeated?: number }, msg: string) => void errors.push({ msg, ...obj }),
    };
    h = await makeHarness(fillable(db.store, full), { now: "2026-11-15T00:00:30Z", log });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    full.on = true;
    h.clock.set(Date.parse("2026-11-15T00:01:00Z"));
    h.scheduler.start();
    await turns(300);
    // One round: the batch (not each schedule on its own: the database fails them all); then the
    // pause on the (standing) clock.
    expect(full.attempts).toBeLessThanOrEqual(2);
    // A disk that is full is no schedule's own failure: said as the database's, once (loop.ts).
    expect(errors.map((e) => e.msg)).toEqual(["firing failed; retrying in 1 s"]);

    for (let i = 0; i < 3; i++) {
      const before = full.attempts;
      h.clock.advance(1000);
      // Waited for, not slept on: 50 ms of wall time was not always enough under a loaded machine.
      await until(() => full.attempts > before);
      await turns(50);
      expect(full.attempts - before).toBeLessThanOrEqual(2);
    }
    expect(errors).toHaveLength(1); // the same failure again within the minute: held back

    full.on = false;
    h.clock.advance(1000);
    await until(() => h!.reports.some((r) => r.started === 1));
    expect(h.reports.filter((r) => r.started === 1)).toHaveLength(1);
    const view = await h.scheduler.schedules.get("s");
    expect(view.fired).toBe(1);
    expect(view.next_fire_at).toBe("2026-11-15T00:02:00Z");
  });
});

describe("fires that fail because the database is away [sqlite]", () => {
  const db = useStore(sqliteDialect);
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.scheduler.close();
    h = null;
  });

  it("log one line for all the schedules they fail, not one each", async () => {
    const errors: string[] = [];
    const log = { warn: () => undefined, error: (_: object, msg: string) => void errors.push(msg) };
    const full = { on: false, attempts: 0 };
    h = await makeHarness(fillable(db.store, full), { now: "2026-11-15T00:00:30Z", log });
    for (let i = 0; i < 20; i++) {
      await h.scheduler.schedules.create({ schedule_id: `s${i}`, workflow: "OrderProcessing", interval: "1m" });
    }
    full.on = true;
    h.clock.set(Date.parse("2026-11-15T00:01:00Z"));
    h.scheduler.start();
    await until(() => full.attempts >= 1);
    await turns(300);
    // Each schedule fired on its own after the batch failed wrote its own line with the stack: 20
    // here. Now the batch is not fired one by one at all (the database fails them all): the
    // round's one line.
    expect(errors.filter((m) => m.startsWith("fir"))).toEqual(["firing failed; retrying in 1 s"]);
    expect(full.attempts).toBeLessThan(20);
  });
});

describe("a database that is down for every round [sqlite]", () => {
  const db = useStore(sqliteDialect);
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.scheduler.close();
    h = null;
  });

  it("is logged once with its error, then every 30 s without it, and once when firing works again", async () => {
    const down = { on: false };
    // Every transaction and read of the loop fails while down, as with PostgreSQL unreachable: the
    // round fails as a whole.
    const store = failingRounds(db.store, () => (down.on ? new Error("connect ECONNREFUSED 127.0.0.1:5432") : null));
    const { lines, log } = logLines();
    h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", log });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    down.on = true;
    h.scheduler.start();
    // 65 rounds a second apart: a line each before (about five a second with the other passes).
    for (let i = 0; i < 65; i++) {
      await turns(5);
      h.clock.advance(1000);
    }
    await turns(20);
    const firing = lines.filter((l) => l.msg.startsWith("firing"));
    expect(firing.map((l) => [l.level, l.msg])).toEqual([
      ["error", "firing failed; retrying in 1 s"],
      ["error", "firing still fails; retrying in 1 s"],
      ["error", "firing still fails; retrying in 1 s"],
    ]);
    expect(firing[0]?.fields.err).toBeInstanceOf(Error);
    expect(firing[1]?.fields).toEqual({ error: "connect ECONNREFUSED 127.0.0.1:5432", failing_for_s: 30 });
    expect(firing[2]?.fields.failing_for_s).toBe(60);

    down.on = false;
    // Said once firing has worked 10 s (src/domain/failure-spell.ts): the rounds go on meanwhile.
    for (let i = 0; i < 40 && !lines.some((l) => l.msg === "firing works again"); i++) {
      h.clock.advance(1000);
      await turns(5);
    }
    await until(() => lines.some((l) => l.msg === "firing works again"));
    const again = lines.filter((l) => l.msg === "firing works again");
    expect(again).toHaveLength(1);
    expect(again[0]?.fields.failures).toBeGreaterThanOrEqual(60);
    expect((await h.scheduler.schedules.get("s")).fired).toBeGreaterThanOrEqual(1);
  });
});

describe("a leader that loses its lock while its fire batch fails [sqlite]", () => {
  const db = useStore(sqliteDialect);
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.scheduler.close();
    h = null;
  });

  it("does not fire the batch's schedules one by one: the new leader fires them", async () => {
    // A leader whose connections were terminated lost its lock and its batch at once, then fired
    // the batch's schedules each on its own beside the new leader for 0.6 s (a tester: 20 fires
    // logged after "this server is a standby").
    const lead = { isLeader: true };
    let urgent = 0;
    const store = new Proxy(db.store, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop === "transaction") {
          return (fn: (tx: unknown) => Promise<unknown>, options?: { urgent?: boolean }) => {
            if (!options?.urgent) return (target.transaction as (...a: unknown[]) => Promise<unknown>)(fn, options);
            urgent++;
            return (target.transaction as (...a: unknown[]) => Promise<unknown>)(async (tx: unknown) => {
              const result = await fn(tx);
              if (urgent === 1) {
                lead.isLeader = false; // the lock's connection went with the batch's
                throw Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" });
              }
              return result;
            }, options);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const warnings: string[] = [];
    const log = { warn: (_: object, msg: string) => void warnings.push(msg), error: () => undefined };
    h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", mayFire: () => lead.isLeader, log });
    for (let i = 0; i < 5; i++) {
      await h.scheduler.schedules.create({ schedule_id: `s${i}`, workflow: "OrderProcessing", interval: "1m" });
    }
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(0);
    expect(urgent).toBe(1);
    expect((await h.scheduler.schedules.get("s0")).fired).toBe(0);
    // Said as what it does (it said "firing each schedule on its own", and fired none).
    expect(warnings).toEqual([
      "fire batch failed and was rolled back; this server no longer leads, so the next leader fires them",
    ]);
  });
});

describe("a leader whose round fails as it stops leading [sqlite]", () => {
  const db = useStore(sqliteDialect);
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.scheduler.close();
    h = null;
  });

  it("does not say firing failed, and leads again 73 s later without 'firing works again'", async () => {
    // A tester's proxy stalled 50 s: the leader's lock connection timed out (a standby), then the
    // round it had begun failed. It logged "firing failed" (error), and 73 s later, leading again,
    // "firing works again" with failed_for_s 73, though it had only not been leading.
    const lead = { isLeader: true };
    const down = { on: false };
    const store = failingRounds(db.store, () => {
      if (!down.on) return null;
      lead.isLeader = false; // the lock's connection failed with the round's
      return new OrbitError(
        "UNAVAILABLE",
        "the database is unavailable (Connection terminated unexpectedly); retry shortly",
      );
    });
    const { lines, log } = logLines();
    h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", mayFire: () => lead.isLeader, log });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    down.on = true;
    h.scheduler.start();
    await until(() => !lead.isLeader && h!.clock.pendingSleeps > 0);
    down.on = false;
    // A standby for 73 s, a round a second.
    for (let i = 0; i < 73; i++) {
      await turns(2);
      h.clock.advance(1000);
    }
    // Leading again: the round fires what came due meanwhile, and works as it did.
    lead.isLeader = true;
    h.clock.advance(1000);
    const harness = h;
    await until(() => harness.reports.length > 0 && harness.clock.pendingSleeps > 0);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "firing round failed after this server stopped leading; the leader fires what is due"],
    ]);
    expect(lines[0]?.fields).toEqual({
      error: "the database is unavailable (Connection terminated unexpectedly); retry shortly",
    });
    expect((await h.scheduler.schedules.get("s")).fired).toBeGreaterThanOrEqual(1);
  });

  it("asks the leadership before saying a long round failed: a leader frozen mid-round steps down unsaid", async () => {
    // A leader SIGSTOPped for 10 s in a fire: its round's error came 0.1 s before its leadership
    // connection's, and it logged "firing failed" (error), blaming the database (a tester).
    const lead = { isLeader: true };
    const asked: number[] = [];
    const frozen = { on: false };
    let clock: { advance(ms: number): void } | null = null;
    const store = failingRounds(db.store, () => {
      if (!frozen.on) return null;
      frozen.on = false;
      clock?.advance(12_000); // frozen 12 s inside the round
      return new OrbitError("UNAVAILABLE", "the database did not answer within 30000 ms (…); retry shortly");
    });
    const { lines, log } = logLines();
    h = await makeHarness(store, {
      now: "2026-11-15T00:00:30Z",
      mayFire: () => lead.isLeader,
      // The connection, asked, finds its session ended: a standby now.
      stillLeads: async () => {
        asked.push(1);
        lead.isLeader = false;
        return false;
      },
      log,
    });
    clock = h.clock;
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    frozen.on = true;
    h.scheduler.start();
    await until(() => asked.length > 0 && h!.clock.pendingSleeps > 0);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "firing round failed after this server stopped leading; the leader fires what is due"],
    ]);
  });
});
