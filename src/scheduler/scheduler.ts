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
import { recordOutcome } from "./outcomes.js";
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
  batchSize?: number;
  onFire?: (report: FireReport, firedAtMs: number) => void;
  log?: SchedulerLogger;
  dueClock?: LoopOptions["dueClock"];
  mayFire?: LoopOptions["mayFire"];
}

/**
 * The engine's execution-ended hook: makes buffered occurrences due when the execution ahead of
 * them ends (the schedule's own, or every schedule sharing the ended execution's concurrency key),
 * then records the outcome on the schedule (outcomes.ts: counters, pause_on_failure, notify).
 */
export async function wakeBuffers(tx: StoreOps, execution: Execution, now: number): Promise<void> {
  if (execution.scheduleId !== null) await tx.wakeBufferedSchedules({ scheduleId: execution.scheduleId }, now);
  if (execution.concurrencyKey !== null) {
    await tx.wakeBufferedSchedules({ concurrencyKey: execution.concurrencyKey }, now);
  }
  await recordOutcome(tx, execution, now);
}

export class Scheduler {
  readonly schedules: Schedules;
  readonly actions: ScheduleActions;
  readonly loop: SchedulerLoop;
  /** The injected clock (the API's preview computes from it). */
  readonly clock: Clock;

  constructor(o: SchedulerOptions) {
    this.clock = o.clock;
    const graceMs = o.graceMs ?? DEFAULT_GRACE_MS;
    this.loop = new SchedulerLoop({
      store: o.store,
      clock: o.clock,
      executions: o.executions,
      graceMs,
      ...(o.batchSize !== undefined ? { batchSize: o.batchSize } : {}),
      ...(o.onFire !== undefined ? { onFire: o.onFire } : {}),
      ...(o.log !== undefined ? { log: o.log } : {}),
      ...(o.dueClock !== undefined ? { dueClock: o.dueClock } : {}),
      ...(o.mayFire !== undefined ? { mayFire: o.mayFire } : {}),
    });
    this.schedules = new Schedules({
      store: o.store,
      clock: o.clock,
      workflows: o.workflows,
      executions: o.executions,
      graceMs,
      ...(o.dueClock !== undefined ? { dueClock: o.dueClock } : {}),
      onChange: () => this.loop.wake(),
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
