/**
 * One dedicated PostgreSQL connection that LISTENs on a channel and calls back on every
 * notification. It reconnects after an error and then calls back once, because a notification may
 * have been missed meanwhile. The worker tasks (task-listener.ts) and the schedules
 * (schedule-listener.ts) each listen through one.
 */
import type pg from "pg";
import { loadPg } from "./driver.js";
import { CONNECT_TIMEOUT_MS, KEEPALIVE_IDLE_MS } from "./postgres-store.js";
import { connectTimedOut, isConnectTimeout } from "./unavailable.js";

export interface PostgresListenerOptions {
  /** `postgres://…`, the store's database. Required. */
  connectionString: string;
  /** The channel to LISTEN on. Required. */
  channel: string;
  /** The store's search_path. Default: the server's default. */
  searchPath?: string;
  /** Only notifications whose payload is this connection's current schema count. Default false. */
  onlyThisSchema?: boolean;
  /** Called for every notification that counts (and after a reconnect). Required. */
  /** `payload`: the notification's (none after a reconnect, which calls it once in case one was missed). */
  onNotify: (payload?: string) => void;
  /** Delay before reconnecting after an error. Default 1 000 ms. */
  retryMs?: number;
  onError?: (error: Error) => void;
  /** Called when listening again after an error (the log's "works again"). */
  onReconnected?: () => void;
}

export class PostgresListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly o: PostgresListenerOptions) {}

  /** Connects and listens; resolves once listening (rejects if the connection fails). */
  async start(): Promise<void> {
    const driver = await loadPg();
    const client = new driver.Client({
      connectionString: this.o.connectionString,
      // Named in pg_stat_activity; `?application_name=` in the URL wins.
      application_name: "orbit",
      ...(this.o.searchPath ? { options: `-c search_path=${this.o.searchPath}` } : {}),
      // A database that does not answer (a network stall) fails the attempt, which is retried,
      // instead of hanging a start; keepalive notices a peer gone while the connection only listens.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    });
    let schema: string | null = null;
    client.on("notification", (n) => {
      if (!this.o.onlyThisSchema || n.payload === schema) this.o.onNotify(n.payload);
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error(`the LISTEN ${this.o.channel} connection ended`)));
    try {
      await client.connect();
      schema = (await client.query<{ s: string }>("SELECT current_schema() AS s")).rows[0]?.s ?? null;
      await client.query(`LISTEN ${this.o.channel}`);
    } catch (error) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      // Said as the pool's are: pg's bare "timeout expired" named neither the bound nor a cause.
      throw isConnectTimeout(error) ? connectTimedOut(CONNECT_TIMEOUT_MS) : error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  /**
   * Starts; if the first connection fails, reports it and keeps retrying in the background (then
   * calls back once connected), so a refusal at start-up is handled like a loss later. Resolves
   * once the first attempt settled: a caller that goes on is listening unless that one failed.
   */
  async startOrRetry(): Promise<void> {
    try {
      await this.start();
    } catch (err) {
      this.o.onError?.(err as Error);
      this.reconnect();
    }
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
        () => {
          this.o.onReconnected?.();
          this.o.onNotify();
        },
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
