/**
 * LISTEN on the channel migration 0004's triggers NOTIFY when a schedule becomes due earlier than
 * before (created, resumed, moved earlier, a buffer released), so a change made through one server
 * wakes the firing loops of the others at once instead of after their sleep (SPEC §5.2, §8).
 * One dedicated connection per server; it reconnects after an error and then wakes the loop once,
 * because a notification may have been missed meanwhile.
 */
import pg from "pg";

/** The channel of migrations/postgres/0004_schedule_notify.sql. */
export const SCHEDULE_CHANNEL = "orbit_schedules";

export interface PostgresScheduleListenerOptions {
  /** `postgres://…`, the store's database. Required. */
  connectionString: string;
  /** The store's search_path: only notifications of this schema count. Default: the server's default. */
  searchPath?: string;
  /** Called for every notification of this schema (and after a reconnect). Required. */
  onNotify: () => void;
  /** Delay before reconnecting after an error. Default 1 000 ms. */
  retryMs?: number;
  onError?: (error: Error) => void;
}

export class PostgresScheduleListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly o: PostgresScheduleListenerOptions) {}

  /** Connects and listens; resolves once listening (rejects if the connection fails). */
  async start(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.o.connectionString,
      ...(this.o.searchPath ? { options: `-c search_path=${this.o.searchPath}` } : {}),
    });
    let schema: string | null = null;
    client.on("notification", (n) => {
      if (n.payload === schema) this.o.onNotify();
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("the schedule LISTEN connection ended")));
    try {
      await client.connect();
      schema = (await client.query<{ s: string }>("SELECT current_schema() AS s")).rows[0]?.s ?? null;
      await client.query(`LISTEN ${SCHEDULE_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  /** Starts, and keeps retrying in the background if the first connection fails. */
  startInBackground(): void {
    this.start().catch((err: Error) => {
      this.o.onError?.(err);
      this.reconnect();
    });
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    this.o.onError?.(error);
    client.end().catch(() => undefined);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.closed || this.retry !== null) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.start().then(
        () => this.o.onNotify(),
        (err: Error) => {
          this.o.onError?.(err);
          this.reconnect();
        },
      );
    }, this.o.retryMs ?? 1000);
    this.retry.unref();
  }

  /** Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
