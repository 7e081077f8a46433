/**
 * Model-based test of the scheduler (docs/scheduling.md, "The reference model"): random sequences
 * of events — time passing, outages, executions ending, pauses and resumes, policy updates, manual
 * triggers, starts that fail and stop failing — drive the real scheduler (real store, both
 * dialects, manual clock) and the naive reference model alike; after every step the started
 * executions, the ledger (every occurrence accounted for exactly once, with its reason), the
 * counters and the firing state must agree.
 *
 * `npm test` runs 150 sequences on SQLite and 50 on PostgreSQL; `npm run fuzz:scheduler` runs many
 * more (ORBIT_FUZZ_RUNS, ORBIT_FUZZ_COMMANDS; ORBIT_FUZZ_SEED replays) and prints what it ran.
 */
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { isActiveStatus } from "../../src/domain/execution.js";
import type { CatchupPolicy, OverlapPolicy } from "../../src/domain/schedule.js";
import { Executions } from "../../src/engine/executions.js";
import { Workflows } from "../../src/engine/workflows.js";
import { Scheduler, wakeBuffers } from "../../src/scheduler/scheduler.js";
import type { Store } from "../../src/store/store.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { accountsOf, settled } from "./audit.js";
import { type ModelSettings, ReferenceModel } from "./model/reference.js";

/** Sequences per dialect: PostgreSQL's round trips cost more, so it runs fewer by default. */
const runsFor = (dialect: string): number => Number(process.env.ORBIT_FUZZ_RUNS ?? (dialect === "sqlite" ? 150 : 50));
const MAX_COMMANDS = Number(process.env.ORBIT_FUZZ_COMMANDS ?? 25);
const SEED = process.env.ORBIT_FUZZ_SEED === undefined ? undefined : Number(process.env.ORBIT_FUZZ_SEED);
const GRACE_MS = 20_000;
const BASE = parseInstant("2026-11-15T00:00:00Z");
const DAY = 86_400_000;

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
      lastExec: s.lastExec,
    });
    const executions = await w.real.store.listExecutions({ scheduleId: id, limit: 10_000 });
    const realExecs = executions.map((e) => `${e.executionId} ${isActiveStatus(e.status) ? "active" : "ended"}`).sort();
    const modelExecs = [...m.executions.values()]
      .filter((e) => e.scheduleId === id)
      .map((e) => `${e.id} ${e.active ? "active" : "ended"}`)
      .sort();
    expect(realExecs, `${where}: executions`).toEqual(modelExecs);
    const ledger = settled(await accountsOf(w.real.store, id));
    const show = (mp: Map<number, string>) =>
      [...mp.entries()].sort((a, b) => a[0] - b[0]).map(([o, a]) => `${formatInstant(o)} ${a}`);
    expect(show(ledger), `${where}: ledger`).toEqual(show(s.accounts));
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

const scheduleIndex = fc.integer({ min: 0, max: 1 });
const pick = (w: World, i: number): string => w.ids[i % w.ids.length] as string;

const commands = [
  fc.integer({ min: 1, max: 40 }).map((s) => cmd(`tick ${s}s`, (m, w) => passTime(m, w, m.now + s * 1000))),
  fc.integer({ min: 1, max: 40_000 }).map((ms) => cmd(`tick ${ms}ms`, (m, w) => passTime(m, w, m.now + ms))),
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
      const update = w.real.scheduler.schedules.update(id, { overlap, catchup, max_catch_up: maxCatchUp });
      // An update is checked against the latest workflow version: refused while it refuses the input.
      if (m.blocked) await expect(update).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      else {
        await update;
        m.update(id, { overlap, catchup, maxCatchUp });
      }
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

function overlapArb(): fc.Arbitrary<OverlapPolicy> {
  return fc.constantFrom("skip", "allow", "cancel_previous", "buffer_one", "buffer_all");
}

function catchupArb(): fc.Arbitrary<[CatchupPolicy, number | null]> {
  return fc.oneof(
    fc.constant<[CatchupPolicy, number | null]>(["skip_missed", null]),
    fc.constant<[CatchupPolicy, number | null]>(["run_once", null]),
    fc.integer({ min: 1, max: 6 }).map((n): [CatchupPolicy, number | null] => ["catch_up", n]),
  );
}

const settingsArb = fc.record({
  intervalS: fc.constantFrom(5, 10, 15),
  overlap: overlapArb(),
  catchup: catchupArb(),
  windowS: fc.option(fc.constantFrom(25, 40), { nil: null }),
});

const worldArb = fc.record({
  schedules: fc.array(settingsArb, { minLength: 1, maxLength: 2 }),
  sharedKey: fc.boolean(),
  startOffsetMs: fc.integer({ min: 0, max: 9_999 }),
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
          const start = BASE + run * 10 * DAY + world.startOffsetMs;
          real.clock.set(start);
          const w: World = { real, run, workflow: `W${run}`, version: 1, ids: [], steps: 0 };
          await real.workflows.register({ name: w.workflow, version: "1.0.0" });
          const m = new ReferenceModel(start, GRACE_MS);
          for (const [k, s] of world.schedules.entries()) {
            const settings: ModelSettings = {
              id: `r${run}-${k}`,
              intervalMs: s.intervalS * 1000,
              overlap: s.overlap,
              catchup: s.catchup[0],
              maxCatchUp: s.catchup[1],
              windowMs: s.windowS === null ? null : s.windowS * 1000,
              key: world.sharedKey ? `k${run}` : null,
            };
            await real.scheduler.schedules.create({
              schedule_id: settings.id,
              workflow: w.workflow,
              interval: `${s.intervalS}s`,
              overlap: settings.overlap,
              catchup: settings.catchup,
              ...(settings.maxCatchUp !== null ? { max_catch_up: settings.maxCatchUp } : {}),
              ...(s.windowS !== null ? { catchup_window: `${s.windowS}s` } : {}),
              ...(settings.key !== null ? { concurrency_key: settings.key } : {}),
            });
            m.create(settings);
            w.ids.push(settings.id);
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
