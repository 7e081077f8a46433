/**
 * The PostgreSQL store: a pg Pool for plain operations, one pooled client per transaction
 * (READ COMMITTED; operations that need it take row locks or advisory locks). Required for
 * several servers (docs/cluster.md).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type pg from "pg";
import { isOutage } from "../../domain/errors.js";
import type { AppliedMigration, MigrationLog } from "../migrations.js";
import type { SqlExecutor, SqlParam } from "../sql/executor.js";
import { SqlOps } from "../sql/sql-ops.js";
import { TransactionEnds } from "../sql/transaction-ends.js";
import type { Store, StoreOps, TransactionOptions } from "../store.js";
import { checkOut } from "./check-out.js";
import { postgresDialect, toPostgresPlaceholders } from "./dialect.js";
import { loadPg, type Pg, typesOf } from "./driver.js";
import { type MigrationsUnderWay, migratePostgres } from "./migrate.js";
import { asUnavailable, isNoAnswer, isReadOnly } from "./unavailable.js";
import { RowShapes, wireParams } from "./wire.js";

export interface PostgresStoreOptions {
  /** `postgres://user@host:port/database`. Required. */
  connectionString: string;
  /** Most connections the pool opens. Default 10. */
  maxConnections?: number;
  /** The connections' `search_path` (e.g. a test schema). Default: the server's default. */
  searchPath?: string;
  /** A connection attempt slower than this fails with UNAVAILABLE. Default {@link CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number;
  /** Waiting longer than this for a free pooled connection fails with UNAVAILABLE. Default {@link POOL_WAIT_MS}. */
  poolWaitMs?: number;
  /**
   * A statement (or BEGIN, COMMIT) without an answer this long fails with UNAVAILABLE and its
   * connection is destroyed. Default {@link ANSWER_TIMEOUT_MS}; 0: no bound.
   */
  answerTimeoutMs?: number;
  /** Receives errors of idle pooled connections (the pool has already dropped them). Default: ignored. */
  onPoolError?: (error: Error) => void;
  /** Receives errors of connections inside a transaction (the transaction fails with UNAVAILABLE). */
  onClientError?: (error: Error) => void;
  /**
   * The folder of migrations to apply instead of the shipped ones. Only for tests that play an older
   * or newer release on one schema (test/store/rolling-upgrade.test.ts). Default: migrations/postgres/.
   */
  migrationsDir?: string;
  /** Told before the start applies migrations (migrate.ts). */
  onMigrating?: (underWay: MigrationsUnderWay) => void;
}

/** A connection attempt slower than this fails the request with UNAVAILABLE instead of hanging it. */
export const CONNECT_TIMEOUT_MS = 5000;
/**
 * How long a request waits for one of the pool's connections while all are in use (the database
 * answering, the pool busy: 50 triggers of one schedule queue on its row lock, each holding a
 * connection) before it fails with UNAVAILABLE. It used to be the connect timeout: pg-pool applies
 * its one `connectionTimeoutMillis` to both, so a burst on a live database was answered "the
 * database is unavailable" after 5 s (test/faults/races.test.ts, under load).
 */
export const POOL_WAIT_MS = 30_000;
/**
 * How long a session of Orbit's may sit idle before PostgreSQL takes it for a frozen process's
 * (SIGSTOP, a paused VM) and ends it: the leadership connection idle (it queries every second), a
 * pooled one idle in an open transaction (Orbit sends a transaction's statements back to back).
 * One bound for both, so a frozen leader's row locks go when its leadership does, not 20 s later
 * while the new leader skips the rows they hold (docs/cluster.md § active-standby).
 */
export const FROZEN_SESSION_MS = 10_000;
/**
 * PostgreSQL ends a session that sits in an open transaction this long without a statement: only a
 * frozen process waits that long, and its row locks would hold up every other server's fire and polls.
 */
export const IDLE_IN_TRANSACTION_MS = FROZEN_SESSION_MS;
/**
 * How long a statement on a pooled connection may go without an answer before the request fails
 * with UNAVAILABLE and the connection is destroyed. Without it a network stall (a partition, a
 * frozen database host, packets dropped with no reset) hung every request, /readyz included, for as
 * long as the stall lasted: the sockets stay open and nothing answers. Orbit's statements take
 * milliseconds; the bound is long enough for a slow one (a retention or ledger prune, a herd's fire
 * batch, a page of a large list) and for one waiting on the rows of a frozen server, whose session
 * PostgreSQL ends after {@link IDLE_IN_TRANSACTION_MS}, and for one waiting on a row that Orbit's
 * own longest write holds (a backfill of 10,000 occurrences under an Idempotency-Key is one
 * transaction of about 20 s: at 15 s a PATCH of that schedule failed as if the network stalled).
 * Migrations, which may wait for another server's, are not bounded.
 */
export const ANSWER_TIMEOUT_MS = 30_000;
/**
 * The connections of {@link PostgresStore.readApart}, apart from the pool (readiness, /metrics),
 * and how long their statements may wait for a lock and run: a scrape that waited with the pool's
 * statements behind a table lock answered after 30 s (Prometheus gives up at 10), and /readyz
 * said "the database does not answer" while it did.
 */
export const APART_CONNECTIONS = 4;
export const APART_LOCK_MS = 1000;
export const APART_STATEMENT_MS = 4000;
/** The TCP keepalive probes of every connection start after this long idle, so a dead peer is noticed. */
export const KEEPALIVE_IDLE_MS = 10_000;

/** A read-only transaction whose statements read one snapshot; it never fails to serialise. */
const SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/**
 * pg's Client with its own connect timeout: pg-pool's `connectionTimeoutMillis` limits the wait for
 * a free connection too, so the attempt itself is limited here, on the client.
 */
function clientWithConnectTimeout(driver: Pg, ms: number): typeof pg.Client {
  return class extends driver.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === "string" ? { connectionString: config } : config), connectionTimeoutMillis: ms });
    }
  };
}

/** Named statements are prepared once per connection; the name is stable per SQL text. */
class StatementNames {
  private readonly names = new Map<string, { name: string; text: string }>();
  get(sql: string): { name: string; text: string } {
    let entry = this.names.get(sql);
    if (!entry) {
      entry = { name: `orbit_${this.names.size}`, text: toPostgresPlaceholders(sql) };
      this.names.set(sql, entry);
    }
    return entry;
  }
}

/** pg reads `query_timeout` off a query's config too; its types know it only for the client's. */
type Bounded<C> = C & { query_timeout?: number };

/** How the statements of an executor are sent: their answer bound, and who hears of one unanswered. */
interface Sending {
  names: StatementNames;
  shapes: RowShapes;
  /** pg's `query_timeout`; 0: none. */
  answerMs: number;
  /** How long a new connection may take: the client's connect timeout, or the pool's wait if shorter. */
  connectMs: number;
  /** A statement got no answer: its connection must not be used again (a transaction's client). */
  onNoAnswer?: () => void;
  /** `performance.now()` at the last answer any statement got (shared by the copies a transaction makes). */
  answered: { at: number | null };
  /** How many failures meant the database was away ({@link PostgresStore.outageCount}); shared likewise. */
  outages: { count: number };
}

/**
 * `asUnavailable(err, answerMs, connectMs)`, counted in `sending.outages` when it means the database
 * was away. `sentAt`: `performance.now()` when the statement went out, so an answer timer that fired
 * late is told apart from a database that did not answer.
 */
function failure(err: unknown, sending: Sending, answerMs?: number, sentAt?: number): unknown {
  const lateMs = answerMs !== undefined && sentAt !== undefined ? performance.now() - sentAt - answerMs : undefined;
  const converted = asUnavailable(err, answerMs, sending.connectMs, lateMs);
  if (isOutage(converted)) sending.outages.count++;
  return converted;
}

/**
 * Runs the shared SQL on whatever `target()` returns: the pool, or the transaction's client. A
 * statement unanswered within `answerMs` fails; pg leaves it in flight on its connection, so the
 * pool's own query() discards that connection (it releases with the error) and a transaction's is
 * released broken.
 */
function executor(target: () => pg.Pool | pg.PoolClient, sending: Sending): SqlExecutor {
  const { names, shapes, answerMs } = sending;
  const query = async (sql: string, params: readonly SqlParam[]) => {
    const { name, text } = names.get(sql);
    const sentAt = performance.now();
    try {
      const config: Bounded<pg.QueryArrayConfig> = { name, text, values: wireParams(params), rowMode: "array" };
      if (answerMs > 0) config.query_timeout = answerMs;
      const r = await target().query<unknown[]>(config);
      sending.answered.at = performance.now();
      return { rows: shapes.objects(name, r.fields, r.rows), rowCount: r.rowCount };
    } catch (err) {
      if (isNoAnswer(err)) sending.onNoAnswer?.();
      throw failure(err, sending, answerMs, sentAt);
    }
  };
  return {
    all: async (sql, params) => (await query(sql, params)).rows,
    run: async (sql, params) => (await query(sql, params)).rowCount ?? 0,
    runMany: async (sql, rows) => {
      const changed: number[] = [];
      for (const params of rows) changed.push((await query(sql, params)).rowCount ?? 0);
      return changed;
    },
  };
}

/** The transaction of {@link PostgresStore.atomically} that store calls made inside it join. */
interface Ambient {
  client: pg.PoolClient;
  savepoints: number;
  ended: boolean;
}

export class PostgresStore extends SqlOps implements Store {
  readonly dialect = "postgres" as const;
  private readonly holder: { pool: pg.Pool | null; apart: pg.Pool | null };
  /** The operations of {@link readApart}. */
  private readonly apartOps: SqlOps;
  private readonly sending: Sending;
  private readonly ambient: AsyncLocalStorage<Ambient>;
  private state: "new" | "open" | "closed" = "new";
  /** After open(): a newer release's additive migrations the schema has (docs/operations.md § Upgrade). */
  newerMigrations: readonly AppliedMigration[] = [];
  /** After open(): the migrations it applied (the server logs them). */
  migrationLog: MigrationLog = { applied: [], created: false };

  constructor(private readonly options: PostgresStoreOptions) {
    const holder: { pool: pg.Pool | null; apart: pg.Pool | null } = { pool: null, apart: null };
    const sending: Sending = {
      names: new StatementNames(),
      shapes: new RowShapes(),
      answerMs: options.answerTimeoutMs ?? ANSWER_TIMEOUT_MS,
      connectMs: Math.min(options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, options.poolWaitMs ?? POOL_WAIT_MS),
      answered: { at: null },
      outages: { count: 0 },
    };
    const ambient = new AsyncLocalStorage<Ambient>();
    // The pool exists only between open() and close(), so the executor looks it up per call;
    // inside atomically() the call joins that transaction instead.
    super(
      executor(() => joined(ambient)?.client ?? requirePool(holder.pool), sending),
      postgresDialect,
    );
    this.apartOps = new SqlOps(
      executor(() => requirePool(holder.apart), sending),
      postgresDialect,
    );
    this.holder = holder;
    this.sending = sending;
    this.ambient = ambient;
  }

  outageCount(): number {
    return this.sending.outages.count;
  }

  async open(): Promise<void> {
    if (this.state !== "new") throw new Error(`the PostgreSQL store cannot be opened: it is ${this.state}`);
    const driver = await loadPg();
    // A database that is gone must fail requests quickly (503), not queue them forever; a busy
    // pool is not a database gone, so waiting for a connection has its own, longer limit.
    const pool = this.newPool(driver, {
      max: this.options.maxConnections ?? 10,
      connectionTimeoutMillis: this.options.poolWaitMs ?? POOL_WAIT_MS,
    });
    try {
      const migrated = await migratePostgres(pool, this.options.migrationsDir, this.options.onMigrating);
      this.newerMigrations = migrated.newer;
      this.migrationLog = migrated.log;
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw failure(error, this.sending);
    }
    this.holder.pool = pool;
    this.holder.apart = this.newPool(driver, {
      max: APART_CONNECTIONS,
      connectionTimeoutMillis: this.sending.connectMs,
      lock_timeout: APART_LOCK_MS,
      statement_timeout: APART_STATEMENT_MS,
    });
    this.state = "open";
  }

  private newPool(driver: Pg, config: pg.PoolConfig): pg.Pool {
    const pool = new driver.Pool({
      connectionString: this.options.connectionString,
      // Named in pg_stat_activity; `?application_name=` in the URL wins.
      application_name: "orbit",
      types: typesOf(driver),
      Client: clientWithConnectTimeout(driver, this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS),
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      ...(this.options.searchPath ? { options: `-c search_path=${this.options.searchPath}` } : {}),
      ...config,
    });
    pool.on("error", (error) => {
      // pg-pool hangs the dropped client on the error: a logger would write all of it (its
      // connection parameters, every prepared statement) for each idle connection a restart drops.
      delete (error as Error & { client?: unknown }).client;
      this.options.onPoolError?.(error);
    });
    return pool;
  }

  readApart<T>(fn: (ops: StoreOps) => Promise<T>): Promise<T> {
    return fn(this.apartOps);
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    const { pool, apart } = this.holder;
    this.holder.pool = null;
    this.holder.apart = null;
    await Promise.all([pool?.end(), apart?.end()]);
  }

  /**
   * Runs `fn` in one transaction that every call on this store made while it runs joins: plain
   * calls use its connection and nested transactions become savepoints. The Idempotency-Key layer
   * (src/api/idempotency.ts) claims a key and makes the request's writes in one transaction this
   * way, so the claim and the write commit or roll back together, across servers.
   */
  atomically<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T> {
    if (joined(this.ambient) !== undefined) return this.transaction(fn);
    return this.transaction(async (tx, client) => {
      const ambient: Ambient = { client: client!, savepoints: 0, ended: false };
      try {
        return await this.ambient.run(ambient, () => fn(tx));
      } finally {
        ambient.ended = true;
      }
    });
  }

  /** Store.readSnapshot: REPEATABLE READ reads one snapshot, the first statement's (READ COMMITTED, each its own). */
  readSnapshot<T>(fn: (ops: StoreOps) => Promise<T>): Promise<T> {
    return joined(this.ambient) === undefined ? this.transaction(fn, {}, SNAPSHOT) : fn(this);
  }

  /** `begin`: this transaction's BEGIN ({@link readSnapshot}'s). */
  async transaction<T>(
    fn: (tx: StoreOps, client?: pg.PoolClient) => Promise<T>,
    _options?: TransactionOptions,
    begin = "BEGIN",
  ): Promise<T> {
    const outer = joined(this.ambient);
    if (outer !== undefined) return this.savepoint(outer, fn);
    let active = true;
    let broken = false;
    // A checked-out client has no listener of the pool's: without this one, a connection dropped
    // mid-transaction (pg_terminate_backend, a restart, a failover) is an unhandled 'error' event
    // that kills the process. The query in flight fails on its own; the client is then discarded.
    const onError = (err: Error) => {
      broken = true;
      this.options.onClientError?.(err);
    };
    let client: pg.PoolClient;
    try {
      client = await checkOut(requirePool(this.holder.pool), onError);
    } catch (err) {
      throw failure(err, this.sending);
    }
    // A statement left unanswered stays in flight on the client: it is released broken (destroyed).
    const sending = { ...this.sending, onNoAnswer: () => (broken = true) };
    const exec = executor(() => {
      if (!active) throw new Error("this transaction has already ended; its tx object cannot be used any more");
      return client;
    }, sending);
    const send = (text: string) => this.control(client, text);
    const ends = new TransactionEnds();
    // The end hooks run after the COMMIT (or the rollback) and the connection's return to the pool.
    return ends.settle(
      (async () => {
        try {
          await send(begin);
          const result = await fn(new SqlOps(exec, postgresDialect, ends), client);
          // Unanswered, the COMMIT may or may not have happened: the request fails 503 (retry it with
          // its Idempotency-Key) and a fire is decided again from the row as it is (its compare-and-set).
          await send("COMMIT");
          return result;
        } catch (error) {
          // A read-only session stays read-only: a new one sees the database as it is now.
          if (isReadOnly(error)) broken = true;
          // A statement still in flight: a ROLLBACK would only queue behind it.
          if (isNoAnswer(error)) broken = true;
          if (!broken) {
            try {
              await send("ROLLBACK");
            } catch {
              broken = true; // the connection itself failed: do not return it to the pool
            }
          }
          throw failure(error, this.sending);
        } finally {
          active = false;
          client.removeListener("error", onError);
          client.release(broken);
        }
      })(),
    );
  }

  /**
   * `performance.now()` at the last answer any statement got (Store.lastAnswerAt).
   */
  lastAnswerAt(): number | null {
    return this.sending.answered.at;
  }

  /**
   * Readiness: why the database refuses writes (a standby, `default_transaction_read_only`), or
   * null. Asked on a connection of {@link readApart}'s, so a pool whose every connection waits on a
   * lock does not hold it up; one that turns out read-only is dropped, since it would stay so after
   * the database is writable again.
   */
  async writeProblem(): Promise<string | null> {
    let broken = false;
    const onError = (): void => {
      broken = true;
    };
    const client = await checkOut(requirePool(this.holder.apart), onError).catch((err: unknown) => {
      throw failure(err, this.sending);
    });
    let readOnly = false;
    try {
      const r = await client.query<{ ro: string; recovery: boolean }>(
        this.bounded({
          text: "SELECT current_setting('transaction_read_only') AS ro, pg_is_in_recovery() AS recovery",
        }),
      );
      const row = r.rows[0];
      if (row?.recovery === true) readOnly = true;
      if (row?.ro === "on") readOnly = true;
      if (!readOnly) return null;
      return row?.recovery === true
        ? "it is a standby in recovery (read-only)"
        : "it refuses writes (default_transaction_read_only is on)";
    } catch (err) {
      broken = true;
      throw failure(err, this.sending, this.sending.answerMs);
    } finally {
      // The client goes back to the pool: a listener left on it would pile up, one per readiness check.
      client.removeListener("error", onError);
      client.release(broken || readOnly);
    }
  }

  async maintenanceProblem(): Promise<string | null> {
    const r = await requirePool(this.holder.pool)
      .query<{ autovacuum: string; off: string | null }>(
        this.bounded({
          text: `SELECT current_setting('autovacuum') AS autovacuum,
            (SELECT string_agg(c.relname, ', ' ORDER BY c.relname) FROM pg_class c
              WHERE c.relnamespace = to_regnamespace(current_schema()) AND c.relkind = 'r'
                AND c.relname LIKE 'orbit\\_%' AND c.reloptions @> ARRAY['autovacuum_enabled=false']) AS off`,
        }),
      )
      .catch((err: unknown) => {
        throw failure(err, this.sending, this.sending.answerMs);
      });
    const row = r.rows[0];
    if (row?.autovacuum === "off") return "autovacuum is off for this PostgreSQL server";
    if (row?.off) return `autovacuum is off for ${row.off}`;
    return null;
  }

  /** A nested transaction inside atomically(): a savepoint, so its failure undoes only its own writes. */
  private async savepoint<T>(outer: Ambient, fn: (tx: StoreOps) => Promise<T>): Promise<T> {
    const name = `orbit_sp_${++outer.savepoints}`;
    const exec = executor(() => outer.client, this.sending);
    try {
      await this.control(outer.client, `SAVEPOINT ${name}`);
      const result = await fn(new SqlOps(exec, postgresDialect));
      await this.control(outer.client, `RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      // Unanswered: the outer transaction's end discards the connection; nothing more is sent on it.
      if (!isNoAnswer(error)) await this.control(outer.client, `ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
      throw failure(error, this.sending, this.sending.answerMs);
    }
  }

  /** `config` with the statement answer bound. */
  private bounded<C extends pg.QueryConfig>(config: C): Bounded<C> {
    return this.sending.answerMs > 0 ? { ...config, query_timeout: this.sending.answerMs } : config;
  }

  /** A transaction's own statement (BEGIN, COMMIT, a savepoint), bounded like the others. */
  private async control(client: pg.PoolClient, text: string): Promise<void> {
    const sentAt = performance.now();
    try {
      await client.query(this.bounded({ text }));
    } catch (err) {
      throw failure(err, this.sending, this.sending.answerMs, sentAt);
    }
  }
}

function joined(ambient: AsyncLocalStorage<Ambient>): Ambient | undefined {
  const a = ambient.getStore();
  return a === undefined || a.ended ? undefined : a;
}

function requirePool(pool: pg.Pool | null): pg.Pool {
  if (!pool) throw new Error("the PostgreSQL store is not open (call open() first, or it was closed)");
  return pool;
}
