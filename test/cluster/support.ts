/** Cluster tests: a fresh PostgreSQL schema per test, and a few queries on it. */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import pg from "pg";
import { afterEach, describe } from "vitest";
import { SERVER_ENTRY, ServerProcess } from "../../scripts/chaos/procs.js";
import type { ClusterMode } from "../../src/server/options.js";
import { childArgs } from "../helpers/child.js";
import { PG_URL } from "../helpers/db.js";

export const CLUSTER_DB = PG_URL ?? "";

/** `describe` that runs only with ORBIT_TEST_DATABASE_URL, warning plainly otherwise. */
export function describeCluster(title: string, body: () => void): void {
  if (!PG_URL) console.warn(`skipped: "${title}": ORBIT_TEST_DATABASE_URL is not set (cluster tests need PostgreSQL)`);
  describe.skipIf(!PG_URL)(title, body);
}

export async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = [], schema?: string) {
  const client = new pg.Client({
    connectionString: CLUSTER_DB,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function createSchema(): Promise<string> {
  const schema = `orbit_c_${randomBytes(5).toString("hex")}`;
  await query(`CREATE SCHEMA ${schema}`);
  return schema;
}

export async function dropSchema(schema: string): Promise<void> {
  await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** Resolves when `check` returns a value other than null/undefined/false; rejects after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Newest execution creation time in the schema (0 when none). */
export async function newestExecutionMs(schema: string): Promise<number> {
  const rows = await query<{ t: string | null }>("SELECT max(created_ms) AS t FROM orbit_executions", [], schema);
  return Number(rows[0]?.t ?? 0);
}

/** Two `orbit server` processes on one schema, each on a free port, started. */
export async function startServerPair(schema: string, cluster: ClusterMode): Promise<ServerProcess[]> {
  const ports = [await freePort(), await freePort()];
  const servers = ports.map(
    (port) => new ServerProcess({ database: CLUSTER_DB, schema, cluster, port, nodeArgs: childArgs(SERVER_ENTRY) }),
  );
  await Promise.all(servers.map((s) => s.start()));
  return servers;
}

/** Kills the servers (thawing a frozen one first) and closes their logs. */
export async function killAll(servers: readonly ServerProcess[]): Promise<void> {
  for (const s of servers) s.thaw();
  await Promise.all(servers.map((s) => s.kill()));
  for (const s of servers) s.close();
}

/**
 * Two servers on a fresh schema per test (`start`), killed and the schema dropped after each test.
 * Call inside a describe.
 */
export function useServerPair(): {
  start(cluster: ClusterMode): Promise<{ schema: string; servers: ServerProcess[] }>;
} {
  let schema = "";
  let servers: ServerProcess[] = [];
  afterEach(async () => {
    await killAll(servers);
    servers = [];
    if (schema) await dropSchema(schema);
    schema = "";
  });
  return {
    async start(cluster) {
      schema = await createSchema();
      servers = await startServerPair(schema, cluster);
      return { schema, servers };
    },
  };
}
