/**
 * LISTEN on the channel migration 0004's triggers NOTIFY when a schedule becomes due earlier than
 * before (created, resumed, moved earlier, a buffer released), so a change made through one server
 * wakes the firing loops of the others at once instead of after their sleep (docs/cluster.md,
 * docs/design.md § The firing transaction). The payload is the schema: deployments in other schemas
 * of the database are ignored.
 */
import { PostgresListener, type PostgresListenerOptions } from "./listener.js";

/** The channel of migrations/postgres/0004_schedule_notify.sql. */
export const SCHEDULE_CHANNEL = "orbit_schedules";

export type PostgresScheduleListenerOptions = Omit<PostgresListenerOptions, "channel" | "onlyThisSchema">;

export class PostgresScheduleListener extends PostgresListener {
  constructor(o: PostgresScheduleListenerOptions) {
    super({ ...o, channel: SCHEDULE_CHANNEL, onlyThisSchema: true });
  }
}
