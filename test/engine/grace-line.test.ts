/**
 * The reaper's grace says `leases extended by a full lease` once, then at most every 30 s with how
 * many graces were held back (src/engine/task-reaper.ts): under connection kills on an
 * active-standby cluster each 503 owed a grace and each said the line, 17 in one second and 243 in
 * a minute (a tester).
 */
import { expect, it } from "vitest";
import { TaskReaper } from "../../src/engine/task-reaper.js";
import type { Store } from "../../src/store/store.js";
import { sqliteDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

const db = useStore(sqliteDialect);

it("says the first grace, holds back the burst after it, and says how many at the next pass 30 s on", async () => {
  const { clock, tasks } = await engineAt(db.store, Date.UTC(2026, 0, 1), "W");
  // Every grace finds one lapsing lease to extend (live workers heartbeat between the 503s).
  const store = new Proxy(db.store, {
    get(target, key) {
      if (key === "extendLapsedLeases") return async () => ["t1"];
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
  const outages = { count: 0 };
  const said: { fields: object; msg: string }[] = [];
  const log = { error: () => undefined, warn: (fields: object, msg: string) => void said.push({ fields, msg }) };
  const reaper = new TaskReaper({ store, clock, tasks, outages, log });
  for (let i = 0; i < 17; i++) {
    outages.count++;
    await reaper.graceIfOwed();
  }
  expect(said).toEqual([
    {
      fields: { extended: 1, because: "it started" },
      msg: expect.stringMatching(/^leases extended by a full lease: /),
    },
  ]);
  clock.advance(30_000);
  await reaper.reapExpired(); // a pass, no grace owed: the held-back ones are said
  const database =
    "its database was away: a statement or a new connection to it failed, or a worker request was answered 503";
  expect(said.slice(1)).toEqual([
    {
      fields: { held_back: 16, held_back_extended: 16, because: database },
      msg: `leases extended by a full lease 16 more times in 30 s: this server could not hear its workers (the last: ${database})`,
    },
  ]);
  await reaper.reapExpired();
  clock.advance(30_000);
  outages.count++;
  await reaper.graceIfOwed();
  expect(said.slice(2)).toEqual([
    {
      fields: { extended: 1, because: database },
      msg: `leases extended by a full lease: this server could not hear its workers (${database})`,
    },
  ]);
});
