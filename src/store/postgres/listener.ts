/**
 * One dedicated PostgreSQL connection that LISTENs on a channel and calls back on every
 * notification. It reconnects after an error and then calls back once, because a notification may
 * have been missed meanwhile. The worker tasks (task-listener.ts) and the schedules
 * (schedule-listener.ts) each listen through one.
 */
import type pg from "pg";
import { SPELL_SETTLE_MS } from "../../domain/failure-spell.js";
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
  /**
   * Called once listening again after an error has lasted `stableMs` without another (the log's
   * "works again"), with how long it has: a connection killed every few seconds said "failed" and
   * "works again" in turn, 13 times a minute (a tester's pg_terminate_backend loop).
   */
  onReconnected?: (upForMs: number) => void;
  /** How long a reconnection must last before onReconnected. Default {@link SPELL_SETTLE_MS} (10 s). */
  stableMs?: number;
}

export class PostgresListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  /** Waits for a reconnection to last `stableMs` before onReconnected. */
  private stable: NodeJS.Timeout | null = null;

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
    this.clearStable();
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
          this.o.onNotify();
          if (this.closed || this.o.onReconnected === undefined) return;
          const stableMs = this.o.stableMs ?? SPELL_SETTLE_MS;
          this.stable = setTimeout(() => {
            this.stable = null;
            this.o.onReconnected?.(stableMs);
          }, stableMs);
          this.stable.unref();
        },
        (err: Error) => {
          this.o.onError?.(err);
          this.reconnect();
        },
      );
    }, this.o.retryMs ?? 1000);
    this.retry.unref();
  }

  private clearStable(): void {
    if (this.stable !== null) clearTimeout(this.stable);
    this.stable = null;
  }

  /** Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.clearStable();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
