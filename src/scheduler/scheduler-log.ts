/** How the scheduler logs: its logger's shape, and the logger for lines about one schedule. */

/**
 * The loop's logger (pino's shape). Every line about a schedule carries its `schedule_id` (a child
 * logger bound to it; docs/operations.md § Monitor).
 */
export interface SchedulerLogger {
  debug?(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  child?(bindings: { schedule_id: string }): SchedulerLogger;
}

/** The logger for lines about one schedule: a child bound to its id, or the fields added by hand. */
export function scheduleLog(log: SchedulerLogger | undefined, scheduleId: string): SchedulerLogger | undefined {
  if (log === undefined) return undefined;
  if (log.child !== undefined) return log.child({ schedule_id: scheduleId });
  return {
    debug: (obj, msg) => log.debug?.({ schedule_id: scheduleId, ...obj }, msg),
    warn: (obj, msg) => log.warn({ schedule_id: scheduleId, ...obj }, msg),
    error: (obj, msg) => log.error({ schedule_id: scheduleId, ...obj }, msg),
  };
}
