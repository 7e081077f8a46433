/**
 * Model-based test of the scheduler (docs/scheduling.md, "The reference model"): random sequences
 * of events — time passing, outages, executions ending, pauses and resumes, policy updates, manual
 * triggers, starts that fail and stop failing — drive the real scheduler (real store, both
 * dialects, manual clock) and the naive reference model alike; after every step the started
 * executions, the ledger (every occurrence accounted for exactly once, with its reason), the
 * counters and the firing state must agree. The timing's own life too: updates of the interval,
 * `end_at` and `max_runs`, delete and create again under the same id, backfills of past ranges.
 *
 * `npm test` runs 80 sequences on SQLite and 30 on PostgreSQL; `npm run fuzz:scheduler` runs many
 * more (ORBIT_FUZZ_RUNS, ORBIT_FUZZ_COMMANDS; ORBIT_FUZZ_SEED replays) and prints what it ran.
 */
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { isActiveStatus } from "../../src/domain/execution.js";
import { Executions } from "../../src/engine/executions.js";
import { Workflows } from "../../src/engine/workflows.js";
import { LEDGER_RETENTION } from "../../src/scheduler/fire-plan.js";
import { Scheduler, wakeBuffers } from "../../src/scheduler/scheduler.js";
import type { Store } from "../../src/store/store.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { ledgerOf } from "./audit.js";
import {
  catchupArb,
  cronArb,
  DAY,
  maxRunsArb,
  modelCron,
  overlapArb,
  type SettingsArb,
  settingsArb,
  timingBody,
  timingText,
  zoneChangeAfter,
} from "./model/arbitraries.js";
import { type ModelSettings, type MSchedule, ReferenceModel } from "./model/reference.js";

/** Sequences per dialect: PostgreSQL's round trips cost more, so it runs fewer by default. */
const runsFor = (dialect: string): number => Number(process.env.ORBIT_FUZZ_RUNS ?? (dialect === "sqlite" ? 80 : 30));
const MAX_COMMANDS = Number(process.env.ORBIT_FUZZ_COMMANDS ?? 25);
const SEED = process.env.ORBIT_FUZZ_SEED === undefined ? undefined : Number(process.env.ORBIT_FUZZ_SEED);
const GRACE_MS = 20_000;
const BASE = parseInstant("2026-11-15T00:00:00Z");

/** The real side: one scheduler on one store for all runs of a test; each run uses its own ids. */
interface Real {
  store: Store;
  clock: ManualClock;
  workflows: Workflows;
  executions: Executions;
  scheduler: Scheduler;
}

interface World {
  real: Real;
  run: number;
  workflow: string;
  version: number;
  ids: string[];
  steps: number;
  /** Per schedule, the timing in force after each ledger row id (to expand missed ranges). */
  timings: Map<string, Array<{ afterRow: number; next: (t: number) => number | null }>>;
  /** The time zone of the run's cron schedules. */
  zone: string;
}

/** The ledger's highest row id of a schedule (0: none). */
async function lastRowId(store: Store, id: string): Promise<number> {
  return (await store.listOccurrences(id, { limit: 1 }))[0]?.id ?? 0;
}

/**
 * Occurrence → its accounts in the real ledger, sorted (`buffered` left out once another account
 * settles it; manual triggers, without occurrence, left out). A missed row expands with the
 * interval in force when it was written, and must hold exactly its count.
 */
async function realAccounts(w: World, id: string): Promise<Map<number, string[]>> {
  const epochs = w.timings.get(id) ?? [];
  const out = new Map<number, string[]>();
  const add = (o: number, a: string) => out.set(o, [...(out.get(o) ?? []), a]);
  for (const r of await ledgerOf(w.real.store, id)) {
    if (r.kind === "skipped" && r.reason === "missed" && r.rangeFromMs !== null && r.rangeToMs !== null) {
      const next = epochs.filter((e) => e.afterRow < r.id).at(-1)?.next;
      if (next === undefined) throw new Error(`no timing for ledger row ${r.id}`);
      let n = 0;
      for (let o: number | null = r.rangeFromMs; o !== null && o <= r.rangeToMs; o = next(o), n++)
        add(o, "skipped:missed");
      if (n !== (r.count ?? 1)) throw new Error(`missed row ${r.id} says ${r.count} but its range holds ${n}`);
      continue;
    }
    if (r.occurrenceMs !== null) add(r.occurrenceMs, r.kind === "skipped" ? `skipped:${r.reason}` : r.kind);
  }
  return settle(out);
}

function settle(accounts: Map<number, string[]>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const [o, list] of accounts) {
    const finals = list.filter((a) => a !== "buffered");
    out.set(o, (finals.length > 0 ? finals : ["buffered"]).sort());
  }
  return out;
}

function modelAccounts(s: MSchedule): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const [o, a] of s.accounts) out.set(o, [a]);
  for (const [o, n] of s.backfilled) for (let k = 0; k < n; k++) out.set(o, [...(out.get(o) ?? []), "started"]);
  return settle(out);
}

async function makeReal(store: Store): Promise<Real> {
  const clock = new ManualClock(BASE);
  const workflows = new Workflows({ store, clock });
  const executions = new Executions({ store, clock, workflows, onEnded: wakeBuffers });
  const scheduler = new Scheduler({ store, clock, workflows, executions, graceMs: GRACE_MS });
  executions.subscribeEnded(() => scheduler.loop.wake());
  return { store, clock, workflows, executions, scheduler };
}

/** Fires both sides at `t`: the loop's fireDue() and the model's round. */
async function fireBoth(m: ReferenceModel, w: World, t: number): Promise<void> {
  w.real.clock.set(t);
  await w.real.scheduler.loop.fireDue();
  m.fireDue(t);
}

/** Backfills [from, to] on both sides: the same answer, or both refuse. */
async function backfillBoth(m: ReferenceModel, w: World, id: string, from: number, to: number): Promise<void> {
  const real = w.real.scheduler.actions.backfill(id, { start_at: formatInstant(from), end_at: formatInstant(to) });
  const expected = m.backfill(id, from, to);
  if (expected === "refused") await expect(real).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  else expect(await real, `backfill ${id}`).toMatchObject(expected);
}

/** Every running execution returns (a quick workflow), on both sides. */
async function completeAll(m: ReferenceModel, w: World): Promise<void> {
  for (const e of [...m.executions.values()].filter((x) => x.active)) {
    await w.real.executions.complete(e.id, {});
    m.complete(e.id);
  }
}

/** Time passes with the loop running: both fire at every instant either says is due, up to `to`. */
async function passTime(m: ReferenceModel, w: World, to: number): Promise<void> {
  for (let guard = 0; guard < 500; guard++) {
    const realNext = await w.real.store.nextDueMs();
    const modelNext = m.nextDue();
    const next = Math.min(realNext ?? Number.POSITIVE_INFINITY, modelNext ?? Number.POSITIVE_INFINITY);
    if (next > to) break;
    await fireBoth(m, w, Math.max(next, m.now));
  }
  w.real.clock.set(to);
  m.now = to;
}

async function compare(m: ReferenceModel, w: World): Promise<void> {
  w.steps++;
  for (const id of w.ids) {
    const s = m.get(id);
    const row = await w.real.store.getSchedule(id);
    if (row === null) throw new Error(`${id} vanished`);
    const where = `${id} at ${formatInstant(m.now)}`;
    expect(
      {
        nextFire: row.nextFireMs,
        due: row.dueMs,
        fired: row.fired,
        skipped: row.skipped,
        buffered: row.buffered,
        paused: row.paused,
        state: row.state,
        lastExec: row.lastExecutionId,
      },
      where,
    ).toEqual({
      nextFire: s.nextFire,
      due: s.due,
      fired: s.fired,
      skipped: s.skipped,
      buffered: s.buffered,
      paused: s.paused,
      // Derived, as docs/scheduling.md says: ended once the timing has nothing left and the buffer
      // has drained; paused or active otherwise (a spent max_runs with a buffer read active while
      // paused after an update: a tester's black-box model).
      state: s.nextFire === null && s.buffered.length === 0 ? "ended" : s.paused ? "paused" : "active",
      lastExec: s.lastExec,
    });
    const executions = await w.real.store.listExecutions({ scheduleId: id, limit: 10_000 });
    const realExecs = executions.map((e) => `${e.executionId} ${isActiveStatus(e.status) ? "active" : "ended"}`).sort();
    const modelExecs = [...m.executions.values()]
      .filter((e) => e.scheduleId === id)
      .map((e) => `${e.id} ${e.active ? "active" : "ended"}`)
      .sort();
    expect(realExecs, `${where}: executions`).toEqual(modelExecs);
    // The ledger keeps a schedule's newest LEDGER_RETENTION rows (docs/design.md § The model); the
    // model keeps every account. Once the real one may have pruned, both are compared past its
    // oldest occurrence (that one's accounts may be cut in two). Before, a run of 85 minutes of
    // 5 s skips failed here with 1,014 rows against 1,020.
    const real = await realAccounts(w, id);
    const pruned = (await ledgerOf(w.real.store, id)).length >= LEDGER_RETENTION;
    const oldest = pruned ? Math.min(...real.keys()) : Number.NEGATIVE_INFINITY;
    const show = (mp: Map<number, string[]>) =>
      [...mp.entries()]
        .filter(([o]) => o > oldest)
        .sort((a, b) => a[0] - b[0])
        .map(([o, a]) => `${formatInstant(o)} ${a.join("+")}`);
    expect(show(real), `${where}: ledger`).toEqual(show(modelAccounts(s)));
  }
}

type Cmd = fc.AsyncCommand<ReferenceModel, World>;

const cmd = (name: string, run: (m: ReferenceModel, w: World) => Promise<void>): Cmd => ({
  check: () => true,
  async run(m, w) {
    await run(m, w);
    await compare(m, w);
  },
  toString: () => name,
});

/** The schedule's timing from the next ledger row on (`after`: the last row before the change). */
function noteTiming(m: ReferenceModel, w: World, id: string, after: number): void {
  const settings = { ...m.get(id), endAt: null };
  const list = w.timings.get(id) ?? [];
  list.push({ afterRow: after, next: (t) => m.nextAfter(settings, t) });
  w.timings.set(id, list);
}

const scheduleIndex = fc.integer({ min: 0, max: 1 });
const pick = (w: World, i: number): string => w.ids[i % w.ids.length] as string;

const commands = [
  fc.integer({ min: 1, max: 40 }).map((s) => cmd(`tick ${s}s`, (m, w) => passTime(m, w, m.now + s * 1000))),
  fc.integer({ min: 1, max: 40_000 }).map((ms) => cmd(`tick ${ms}ms`, (m, w) => passTime(m, w, m.now + ms))),
  fc.integer({ min: 1, max: 40 }).map((min) => cmd(`tick ${min}min`, (m, w) => passTime(m, w, m.now + min * 60_000))),
  fc.integer({ min: 10, max: 150 }).map((s) =>
    cmd(`outage ${s}s`, async (m, w) => {
      // Down: nothing fires until the server is back, then one round at once.
      await fireBoth(m, w, m.now + s * 1000);
    }),
  ),
  fc.integer({ min: 0, max: 50 }).map((k) =>
    cmd(`complete #${k}`, async (m, w) => {
      const active = [...m.executions.values()].filter((e) => e.active).sort((a, b) => (a.id < b.id ? -1 : 1));
      const e = active[k % Math.max(1, active.length)];
      if (e === undefined) return;
      await w.real.executions.complete(e.id, {});
      m.complete(e.id);
      await fireBoth(m, w, m.now);
    }),
  ),
  fc.constant(
    // Every running execution returns at once (a quick workflow): a backfill's runs end before the
    // next fire comes to their occurrences, which then must not hold the overlap slot.
    cmd("complete all", async (m, w) => {
      await completeAll(m, w);
      await fireBoth(m, w, m.now);
    }),
  ),
  scheduleIndex.map((i) =>
    cmd(`pause ${i}`, async (m, w) => {
      const id = pick(w, i);
      if (m.get(id).paused) return;
      await w.real.scheduler.actions.pause(id, {});
      m.pause(id);
    }),
  ),
  fc.tuple(scheduleIndex, fc.boolean()).map(([i, catchUp]) =>
    cmd(`resume ${i} catch_up=${catchUp}`, async (m, w) => {
      const id = pick(w, i);
      if (!m.get(id).paused) return;
      await w.real.scheduler.actions.resume(id, { catch_up: catchUp });
      m.resume(id, catchUp);
      await fireBoth(m, w, m.now);
    }),
  ),
  fc.tuple(scheduleIndex, overlapArb(), catchupArb()).map(([i, overlap, [catchup, maxCatchUp]]) =>
    cmd(`update ${i} ${overlap} ${catchup}/${maxCatchUp}`, async (m, w) => {
      const id = pick(w, i);
      // An update that names neither the workflow nor the input is not checked against the latest
      // version: it goes through while that version refuses the input (the fires record the refusal).
      await w.real.scheduler.schedules.update(id, { overlap, catchup, max_catch_up: maxCatchUp });
      m.update(id, { overlap, catchup, maxCatchUp });
      await fireBoth(m, w, m.now);
    }),
  ),
  scheduleIndex.map((i) =>
    cmd(`trigger ${i}`, async (m, w) => {
      const id = pick(w, i);
      let outcome: "started" | "not_started" | "failed";
      let executionId = "";
      try {
        const r = await w.real.scheduler.actions.trigger(id, {});
        outcome = r.started ? "started" : "not_started";
        executionId = r.execution_id ?? "";
      } catch {
        outcome = "failed";
      }
      expect(m.trigger(id, executionId), `trigger ${id}`).toBe(outcome);
      await fireBoth(m, w, m.now);
    }),
  ),
  fc
    .tuple(
      scheduleIndex,
      fc.constantFrom(5, 10, 15),
      fc.option(cronArb(), { nil: null }),
      fc.option(fc.integer({ min: 1, max: 120 })),
      maxRunsArb(),
      fc.constantFrom(0, 1500, 4000),
    )
    .map(([i, intervalS, cron, endInS, maxRuns, jitterMs]) =>
      cmd(
        `retime ${i} ${timingText(intervalS, cron)} end_at=+${endInS}s max_runs=${maxRuns} jitter=${jitterMs}ms`,
        async (m, w) => {
          // Giving cron drops interval, and the reverse drops cron, timezone and dst.
          const id = pick(w, i);
          const endAt = endInS === null ? null : m.now + endInS * 1000;
          await w.real.scheduler.schedules.update(id, {
            ...timingBody(intervalS, cron, w.zone),
            end_at: endAt === null ? null : formatInstant(endAt),
            max_runs: maxRuns,
            jitter: jitterMs > 0 ? `${jitterMs}ms` : null,
          });
          // Read after the update: the rows it wrote itself (what came due under the old timing,
          // docs/scheduling.md § Updates) expand with the old timing. Read while it ran, a missed
          // range it wrote was expanded with the new one (seed -1526146718).
          const after = await lastRowId(w.real.store, id);
          m.update(id, { intervalMs: intervalS * 1000, cron: modelCron(cron, w.zone), endAt, maxRuns, jitterMs });
          noteTiming(m, w, id, after);
          await fireBoth(m, w, m.now);
        },
      ),
    ),
  fc.tuple(scheduleIndex, settingsArb).map(([i, settings]) =>
    cmd(`recreate ${i} ${JSON.stringify(settings)}`, async (m, w) => {
      // Delete, then create again under the same id: a new schedule, with no past occurrences.
      if (m.blocked) return;
      const id = pick(w, i);
      const key = m.get(id).key;
      await w.real.scheduler.schedules.delete(id);
      m.delete(id);
      await createBoth(m, w, id, settings, key);
      await fireBoth(m, w, m.now);
    }),
  ),
  fc.tuple(scheduleIndex, fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 60 })).map(([i, backS, lenS]) =>
    cmd(`backfill ${i} now-${backS}s +${lenS}s`, async (m, w) => {
      if (m.blocked) return;
      const from = m.now - backS * 1000;
      await backfillBoth(m, w, pick(w, i), from, from + lenS * 1000);
      await fireBoth(m, w, m.now);
    }),
  ),
  fc.tuple(scheduleIndex, fc.integer({ min: 0, max: 150 }), fc.boolean()).map(([i, outageS, quick]) =>
    cmd(
      `backfill ${i} what is due and undecided, after an outage of ${outageS}s${quick ? ", ended" : ""}`,
      async (m, w) => {
        // What a paused span (or an outage's) holds, backfilled before the fire that decides it:
        // `resume {"catch_up": true}`, or the loop coming back. `quick`: those runs end first.
        if (m.blocked) return;
        const id = pick(w, i);
        w.real.clock.set(m.now + outageS * 1000);
        m.now += outageS * 1000;
        const s = m.get(id);
        if (s.nextFire !== null && s.nextFire <= m.now) await backfillBoth(m, w, id, s.nextFire, m.now);
        if (quick) await completeAll(m, w);
        await fireBoth(m, w, m.now);
      },
    ),
  ),
  fc.boolean().map((block) =>
    cmd(block ? "block starts" : "unblock starts", async (m, w) => {
      if (m.blocked === block) return;
      // A new latest version whose schema the schedules' input ({}) fails, or one without a schema.
      w.version++;
      await w.real.workflows.register({
        name: w.workflow,
        version: `${w.version}.0.0`,
        ...(block ? { input_schema: { type: "object", required: ["order_id"] } } : {}),
      });
      m.blocked = block;
    }),
  ),
];

/** Creates the schedule on both sides. */
async function createBoth(m: ReferenceModel, w: World, id: string, s: SettingsArb, key: string | null): Promise<void> {
  const settings: ModelSettings = {
    id,
    intervalMs: s.intervalS * 1000,
    cron: modelCron(s.cron, w.zone),
    overlap: s.overlap,
    catchup: s.catchup[0],
    maxCatchUp: s.catchup[1],
    windowMs: s.windowS === null ? null : s.windowS * 1000,
    key,
    endAt: s.endInS === null ? null : m.now + s.endInS * 1000,
    maxRuns: s.maxRuns,
    jitterMs: s.jitterMs,
  };
  await w.real.scheduler.schedules.create({
    schedule_id: settings.id,
    workflow: w.workflow,
    ...timingBody(s.intervalS, s.cron, w.zone),
    overlap: settings.overlap,
    catchup: settings.catchup,
    ...(settings.maxCatchUp !== null ? { max_catch_up: settings.maxCatchUp } : {}),
    ...(s.windowS !== null ? { catchup_window: `${s.windowS}s` } : {}),
    ...(settings.key !== null ? { concurrency_key: settings.key } : {}),
    ...(settings.endAt !== null ? { end_at: formatInstant(settings.endAt) } : {}),
    ...(settings.maxRuns !== null ? { max_runs: settings.maxRuns } : {}),
    ...(settings.jitterMs > 0 ? { jitter: `${settings.jitterMs}ms` } : {}),
  });
  m.create(settings);
  w.timings.delete(id);
  noteTiming(m, w, id, 0);
}

const worldArb = fc.record({
  schedules: fc.array(settingsArb, { minLength: 1, maxLength: 2 }),
  sharedKey: fc.boolean(),
  startOffsetMs: fc.integer({ min: 0, max: 9_999 }),
  zone: fc.constantFrom("Europe/Berlin", "America/New_York", "Australia/Lord_Howe"),
  /** Start this long before the zone's next DST change (null: anywhere). */
  beforeDstMin: fc.option(fc.integer({ min: 0, max: 40 }), { nil: null }),
});

describeEachDialect("scheduler: model-based test against the reference model", (dialect) => {
  const db = useStore(dialect);
  const totals = { sequences: 0, steps: 0, disagreements: 0 };
  afterAll(() => {
    if (process.env.ORBIT_FUZZ_RUNS !== undefined) {
      console.log(
        `fuzz:scheduler [${dialect.name}] ${totals.sequences} sequences, ${totals.steps} steps, 0 disagreements`,
      );
    }
  });

  const RUNS = runsFor(dialect.name);
  it(
    `${RUNS} random sequences: started set, ledger and counters agree with the model after every step`,
    async () => {
      const real = await makeReal(db.store);
      let run = 0;
      await fc.assert(
        fc.asyncProperty(worldArb, fc.commands(commands, { maxCommands: MAX_COMMANDS }), async (world, cmds) => {
          run++;
          // Runs move forward in time (250 days each), so a run can start just before a DST change.
          const runStart = BASE + run * 250 * DAY + world.startOffsetMs;
          const start =
            world.beforeDstMin === null
              ? runStart
              : zoneChangeAfter(world.zone, runStart) - world.beforeDstMin * 60_000 + world.startOffsetMs;
          real.clock.set(start);
          const w: World = {
            real,
            run,
            workflow: `W${run}`,
            version: 1,
            ids: [],
            steps: 0,
            timings: new Map(),
            zone: world.zone,
          };
          await real.workflows.register({ name: w.workflow, version: "1.0.0" });
          const m = new ReferenceModel(start, GRACE_MS);
          for (const [k, s] of world.schedules.entries()) {
            const id = `r${run}-${k}`;
            await createBoth(m, w, id, s, world.sharedKey ? `k${run}` : null);
            w.ids.push(id);
          }
          try {
            await fc.asyncModelRun(() => ({ model: m, real: w }), cmds);
          } catch (err) {
            totals.disagreements++;
            throw err;
          } finally {
            totals.sequences++;
            totals.steps += w.steps;
            for (const id of w.ids) await real.scheduler.schedules.delete(id);
          }
        }),
        { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
    },
    Math.max(600_000, RUNS * 3000),
  );
});
