/**
 * Leadership for `--cluster active-standby` (docs/cluster.md): a session advisory lock held on a dedicated
 * PostgreSQL connection. The holder is the leader and fires; the others serve the API and retry
 * the lock every second, so a standby takes over within about a second of the leader's connection
 * dying (PostgreSQL releases a session lock when its connection ends).
 *
 * The leader stops firing the moment it may have lost the lock: on the connection's 'error' or
 * 'end', and when the `SELECT 1` it sends every second fails or takes longer than
 * {@link LEADERSHIP_QUERY_TIMEOUT_MS} (a half-open connection: the database may already have
 * dropped the session and given the lock to a standby). Exactly-once never depends on this: a fire
 * is one transaction guarded by a compare-and-set, so two servers that both believe they lead for a
 * moment still start each occurrence once (docs/cluster.md).
 *
 * A leader frozen rather than dead (SIGSTOP, a paused VM) keeps its TCP connection, and so its
 * session and the lock, for as long as the kernel keeps the socket. The lock connection therefore
 * sets `idle_session_timeout` (PostgreSQL 14 and later): a leader sends a query every second, so
 * only one that stopped running sits idle long enough for PostgreSQL to end its session.
 */
import type pg from "pg";
import { loadPg } from "../store/postgres/driver.js";
import { FROZEN_SESSION_MS, KEEPALIVE_IDLE_MS } from "../store/postgres/postgres-store.js";
import { connectTimedOut, isConnectTimeout } from "../store/postgres/unavailable.js";

/** How often a standby retries the lock and a leader checks its connection. */
export const LEADERSHIP_POLL_MS = 1000;
/** A leadership query (or connect) slower than this counts as a lost connection. */
export const LEADERSHIP_QUERY_TIMEOUT_MS = 3000;
/**
 * PostgreSQL ends the lock connection's session after this long without a query (a frozen leader).
 * The same bound ends a frozen server's sessions idle in a transaction, so the rows it held are
 * freed when its leadership is (FROZEN_SESSION_MS).
 */
export const LEADERSHIP_IDLE_LIMIT_MS = FROZEN_SESSION_MS;

export interface LeadershipOptions {
  connectionString: string;
  /** search_path of the connection: the lock is per schema, so deployments in two schemas do not share it. */
  searchPath?: string;
  /** Called when this server becomes the leader or stops being it (see also {@link Leadership.subscribe}). */
  onChange?(leader: boolean): void;
  onError(err: unknown): void;
  /** Called after each poll that reached the database (the log's "works again" after an outage). */
  onOk?(): void;
}

// One key (hashtext() is int4): never the same lock as Orbit's pairs of keys (ADVISORY_LOCKS).
const TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext('orbit-leader:' || current_schema())) AS held";
const UNLOCK = "SELECT pg_advisory_unlock(hashtext('orbit-leader:' || current_schema()))";

export class Leadership {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private leader = false;
  private closed = false;
  private busy = false;
  private since: number | null = null;

  private readonly listeners = new Set<(leader: boolean) => void>();

  constructor(private readonly o: LeadershipOptions) {}

  /** Calls `listener` on each change of leadership, after onChange; returns the unsubscribe function. */
  subscribe(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** Epoch ms since which this server leads, or null while it is a standby. */
  get leaderSinceMs(): number | null {
    return this.since;
  }

  /** Tries once at once (so a lone server leads from its first tick), then every second. */
  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), LEADERSHIP_POLL_MS);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      if (this.client === null) {
        const driver = await loadPg();
        const client = new driver.Client({
          connectionString: this.o.connectionString,
          // Named in pg_stat_activity; `?application_name=` in the URL wins.
          application_name: "orbit",
          ...(this.o.searchPath ? { options: `-c search_path=${this.o.searchPath}` } : {}),
          connectionTimeoutMillis: LEADERSHIP_QUERY_TIMEOUT_MS,
          query_timeout: LEADERSHIP_QUERY_TIMEOUT_MS,
          keepAlive: true,
          keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
        });
        client.on("error", (err) => {
          if (this.client !== client) return;
          this.o.onError(err);
          this.drop();
        });
        client.on("end", () => {
          if (this.client !== client) return;
          this.o.onError(new Error("the leadership connection ended"));
          this.drop();
        });
        try {
          await client.connect();
        } catch (err) {
          await client.end().catch(() => undefined);
          throw isConnectTimeout(err) ? connectTimedOut(LEADERSHIP_QUERY_TIMEOUT_MS) : err;
        }
        await client.query(`SET idle_session_timeout = ${LEADERSHIP_IDLE_LIMIT_MS}`).catch(async (err: unknown) => {
          // 42704: a PostgreSQL before 14 has no such setting; a frozen leader then holds on (docs/cluster.md).
          if ((err as { code?: string }).code === "42704") return;
          await client.end().catch(() => undefined);
          throw err;
        });
        // Closed while this poll connected: close() saw no client, so this one must not take the lock.
        if (this.closed) {
          await client.end().catch(() => undefined);
          return;
        }
        this.client = client;
      }
      if (this.leader) await this.client.query("SELECT 1");
      else {
        const { rows } = await this.client.query<{ held: boolean }>(TRY_LOCK);
        if (rows[0]?.held === true && !this.closed) this.set(true);
      }
      this.o.onOk?.();
    } catch (err) {
      this.o.onError(err);
      this.drop();
    } finally {
      this.busy = false;
    }
  }

  /**
   * Whether this server still leads, asked of its connection now: after a pause of the process the
   * lock may be gone (the session ended by idle_session_timeout) before the connection says so.
   */
  async confirm(): Promise<boolean> {
    const client = this.client;
    if (!this.leader || client === null) return this.leader;
    try {
      await client.query("SELECT 1");
    } catch (err) {
      if (this.client === client) {
        this.o.onError(err);
        this.drop();
      }
    }
    return this.leader;
  }

  private set(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    this.since = leader ? Date.now() : null;
    this.o.onChange?.(leader);
    for (const listener of this.listeners) listener(leader);
  }

  /** The connection failed: the lock went with it. */
  private drop(): void {
    const client = this.client;
    this.client = null;
    this.set(false);
    void client?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    const client = this.client;
    this.client = null;
    this.since = null;
    if (client !== null) {
      if (this.leader) await client.query(UNLOCK).catch(() => undefined);
      await client.end().catch(() => undefined);
    }
    this.leader = false;
  }
}
