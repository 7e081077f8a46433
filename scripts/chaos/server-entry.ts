/**
 * One Orbit server for the chaos harness and the cluster tests: `orbit server` as the CLI starts it,
 * plus a PostgreSQL schema per run (startServer's `databaseSchema`, which the CLI does not expose).
 * Configured by environment; prints `ORBIT_READY <url>` once listening; SIGTERM closes it.
 *
 *   ORBIT_CHAOS_DATABASE  postgres://… (required)
 *   ORBIT_CHAOS_SCHEMA    search_path (required)
 *   ORBIT_CHAOS_CLUSTER   single | active-standby | shared (required)
 *   ORBIT_CHAOS_PORT      port (required)
 *   ORBIT_CHAOS_GRACE_MS  misfire grace, ms (default 60000)
 *   ORBIT_CHAOS_LOG       pino level (default warn)
 */
import type { ClusterMode } from "../../src/server/options.js";
import { startServer } from "../../src/server/server.js";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const server = await startServer({
  database: env("ORBIT_CHAOS_DATABASE"),
  databaseSchema: env("ORBIT_CHAOS_SCHEMA"),
  cluster: env("ORBIT_CHAOS_CLUSTER") as ClusterMode,
  port: Number(env("ORBIT_CHAOS_PORT")),
  misfireGraceMs: Number(process.env.ORBIT_CHAOS_GRACE_MS ?? 60_000),
  logger: process.env.ORBIT_CHAOS_LOG ?? "warn",
});
process.stdout.write(`ORBIT_READY ${server.url}\n`);

let stopping = false;
process.on("SIGTERM", () => {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
