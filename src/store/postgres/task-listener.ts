/**
 * LISTEN on the channel migration 0002's trigger NOTIFYs when a worker task becomes pending, so a
 * task created on one server wakes the long-polling workers of every server.
 */
import { PostgresListener, type PostgresListenerOptions } from "./listener.js";

/** The channel of migrations/postgres/0002_worker_protocol.sql. */
export const TASK_CHANNEL = "orbit_worker_tasks";

export type PostgresTaskListenerOptions = Omit<PostgresListenerOptions, "channel" | "onlyThisSchema">;

export class PostgresTaskListener extends PostgresListener {
  constructor(o: PostgresTaskListenerOptions) {
    super({ ...o, channel: TASK_CHANNEL });
  }
}
