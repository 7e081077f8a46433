/**
 * LISTEN on the channel migration 0002's trigger NOTIFYs when a worker task becomes pending, so a
 * task created on one server wakes the long-polling workers of every server. One dedicated
 * connection; it reconnects after an error, waking the pollers once (a notification may have been
 * missed meanwhile).
 */
import pg from "pg";

/** The channel of migrations/postgres/0002_worker_protocol.sql. */
export const TASK_CHANNEL = "orbit_worker_tasks";

export interface PostgresTaskListenerOptions {
  /** `postgres://…`, the store's database. Required. */
  connectionString: string;
  /** Called for every notification (and after a reconnect). Required. */
  onNotify: () => void;
  /** Delay before reconnecting after an error. Default 1 000 ms. */
  retryMs?: number;
  onError?: (error: Error) => void;
}

export class PostgresTaskListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly o: PostgresTaskListenerOptions) {}

  /** Connects and listens; resolves once listening (rejects if the first connection fails). */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.connectionString });
    client.on("notification", () => this.o.onNotify());
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("the LISTEN connection ended")));
    await client.connect();
    await client.query(`LISTEN ${TASK_CHANNEL}`);
    if (this.closed) {
      await client.end();
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    this.o.onError?.(error);
    client.end().catch(() => undefined);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.closed) return;
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
  }

  /** Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
