/** A scheduler on a real store with a manual clock: tests move time and call fireDue(). */

import { ManualClock } from "../../src/clock/manual-clock.js";
import { Executions } from "../../src/engine/executions.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { FireReport } from "../../src/scheduler/fire.js";
import type { SchedulerLogger } from "../../src/scheduler/loop.js";
import { Scheduler, wakeBuffers } from "../../src/scheduler/scheduler.js";
import type { Store } from "../../src/store/store.js";
import { parseInstant } from "../../src/time/format.js";
import { ORDER_INPUT, ORDER_SCHEMA } from "../helpers/seed.js";

export interface Harness {
  clock: ManualClock;
  workflows: Workflows;
  executions: Executions;
  scheduler: Scheduler;
  reports: FireReport[];
  /** Sets the clock and fires everything due; returns how many schedules advanced. */
  fireAt(time: string): Promise<number>;
}

export async function makeHarness(
  store: Store,
  options: {
    now?: string;
    maxActiveExecutions?: number;
    graceMs?: number;
    ledgerRetention?: number;
    log?: SchedulerLogger;
    stallWarnMs?: number;
    heldRowWarnMs?: number;
    mayFire?: () => boolean;
    stillLeads?: () => Promise<boolean>;
  } = {},
): Promise<Harness> {
  const clock = new ManualClock(parseInstant(options.now ?? "2026-11-15T18:51:00.347Z"));
  const workflows = new Workflows({ store, clock });
  const executions = new Executions({
    store,
    clock,
    workflows,
    ...(options.maxActiveExecutions !== undefined ? { maxActiveExecutions: options.maxActiveExecutions } : {}),
    onEnded: wakeBuffers,
  });
  const reports: FireReport[] = [];
  const scheduler = new Scheduler({
    store,
    clock,
    workflows,
    executions,
    ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
    ...(options.ledgerRetention !== undefined ? { ledgerRetention: options.ledgerRetention } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...(options.stallWarnMs !== undefined ? { stallWarnMs: options.stallWarnMs } : {}),
    ...(options.heldRowWarnMs !== undefined ? { heldRowWarnMs: options.heldRowWarnMs } : {}),
    ...(options.mayFire !== undefined ? { mayFire: options.mayFire } : {}),
    ...(options.stillLeads !== undefined ? { stillLeads: options.stillLeads } : {}),
    onFire: (r) => reports.push(r),
  });
  executions.subscribeEnded(() => scheduler.loop.wake());
  await workflows.register({ name: "OrderProcessing", version: "1.0.0", input_schema: ORDER_SCHEMA });
  return {
    clock,
    workflows,
    executions,
    scheduler,
    reports,
    async fireAt(time: string) {
      clock.set(parseInstant(time));
      return scheduler.loop.fireDue();
    },
  };
}

export { ORDER_INPUT, ORDER_SCHEMA };
