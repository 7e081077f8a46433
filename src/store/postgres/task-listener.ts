/**
 * LISTEN on the channel migration 0002's trigger NOTIFYs when a worker task becomes pending, so a
 * task created on one server wakes the long-polling workers of every server.
 */
import { TASK_CHANNEL } from "./channels.js";
import { PostgresListener, type PostgresListenerOptions } from "./listener.js";

export { CANCEL_NOTIFY_PREFIX, TASK_CHANNEL } from "./channels.js";

export type PostgresTaskListenerOptions = Omit<PostgresListenerOptions, "channel" | "onlyThisSchema">;

export class PostgresTaskListener extends PostgresListener {
  constructor(o: PostgresTaskListenerOptions) {
    super({ ...o, channel: TASK_CHANNEL });
  }
}
