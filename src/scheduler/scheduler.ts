/**
 * The scheduler as one object for the composition root: the schedule service, its actions and the
 * firing loop, wired to the engine's execution-ended hook (which starts waiting buffers).
 */
import type { Clock } from "../domain/clock.js";
import type { Execution } from "../domain/execution.js";
import type { Executions } from "../engine/executions.js";
import type { Workflows } from "../engine/workflows.js";
import type { Store, StoreOps } from "../store/store.js";
import { ScheduleActions } from "./actions.js";
import type { FireReport } from "./fire.js";
import { type LoopOptions, type SchedulerLogger, SchedulerLoop } from "./loop.js";
import { recordOutcomes } from "./outcomes.js";
import { Schedules } from "./schedules.js";

/** Default misfire grace (docs/design.md § Catch-up, `--misfire-grace`). */
export const DEFAULT_GRACE_MS = 60_000;

export interface SchedulerOptions {
  store: Store;
  clock: Clock;
  workflows: Workflows;
  executions: Executions;
  /** Default 60 s. */
  graceMs?: number;
  /** Ledger rows kept per schedule (`--ledger-retention`). Default LEDGER_RETENTION (1,000). */
  ledgerRetention?: number;
  batchSize?: number;
  onFire?: (report: FireReport, firedAtMs: number) => void;
  log?: SchedulerLogger;
  dueClock?: LoopOptions["dueClock"];
  mayFire?: LoopOptions["mayFire"];
  stillLeads?: LoopOptions["stillLeads"];
  stallWarnMs?: LoopOptions["stallWarnMs"];
  heldRowWarnMs?: LoopOptions["heldRowWarnMs"];
}

/**
 * The engine's execution-ended hook, for one execution or a batch ended in one transaction: makes
 * buffered occurrences due when the executions ahead of them end (their schedules', and every
 * schedule sharing one of their concurrency keys; one statement), then records the outcomes on the
 * schedules (outcomes.ts: counters, pause_on_failure, notify).
 */
export async function wakeBuffers(tx: StoreOps, executions: readonly Execution[], now: number): Promise<void> {
  const scheduleIds = new Set<string>();
  const concurrencyKeys = new Set<string>();
  for (const e of executions) {
    if (e.scheduleId !== null) scheduleIds.add(e.scheduleId);
    if (e.concurrencyKey !== null) concurrencyKeys.add(e.concurrencyKey);
  }
  await tx.wakeBufferedSchedules({ scheduleIds: [...scheduleIds], concurrencyKeys: [...concurrencyKeys] }, now);
  await recordOutcomes(tx, executions, now);
}

export class Scheduler {
  readonly schedules: Schedules;
  readonly actions: ScheduleActions;
  readonly loop: SchedulerLoop;
  /** The injected clock (the API's preview computes from it). */
  readonly clock: Clock;
  /** The time occurrences come due by: the database's with --cluster shared, else {@link clock}'s. */
  readonly dueNow: () => Promise<number>;
  /** How late an occurrence may be and still start; also how late is overdue (--misfire-grace). */
  readonly graceMs: number;

  constructor(o: SchedulerOptions) {
    this.clock = o.clock;
    const dueClock = o.dueClock;
    this.dueNow = dueClock !== undefined ? () => dueClock() : async () => o.clock.now();
    const graceMs = o.graceMs ?? DEFAULT_GRACE_MS;
    this.graceMs = graceMs;
    this.loop = new SchedulerLoop({
      store: o.store,
      clock: o.clock,
      executions: o.executions,
      graceMs,
      ...(o.ledgerRetention !== undefined ? { ledgerRetention: o.ledgerRetention } : {}),
      ...(o.batchSize !== undefined ? { batchSize: o.batchSize } : {}),
      ...(o.onFire !== undefined ? { onFire: o.onFire } : {}),
      ...(o.log !== undefined ? { log: o.log } : {}),
      ...(o.dueClock !== undefined ? { dueClock: o.dueClock } : {}),
      ...(o.mayFire !== undefined ? { mayFire: o.mayFire } : {}),
      ...(o.stillLeads !== undefined ? { stillLeads: o.stillLeads } : {}),
      ...(o.stallWarnMs !== undefined ? { stallWarnMs: o.stallWarnMs } : {}),
      ...(o.heldRowWarnMs !== undefined ? { heldRowWarnMs: o.heldRowWarnMs } : {}),
    });
    this.schedules = new Schedules({
      store: o.store,
      clock: o.clock,
      workflows: o.workflows,
      executions: o.executions,
      graceMs,
      ...(o.ledgerRetention !== undefined ? { ledgerRetention: o.ledgerRetention } : {}),
      ...(o.dueClock !== undefined ? { dueClock: o.dueClock } : {}),
      onChange: () => this.loop.wake(),
      ...(o.onFire !== undefined ? { onFire: o.onFire } : {}),
    });
    this.actions = new ScheduleActions(this.schedules);
  }

  start(): void {
    this.loop.start();
  }

  close(): Promise<void> {
    return this.loop.close();
  }
}
