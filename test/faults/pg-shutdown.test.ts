/**
 * Fault suite, PostgreSQL: `orbit server` is stopped (SIGTERM, a deploy) while the network to its
 * database stalls. A request's statement waits for its answer bound (30 s by default), and the stop
 * waited for it: past `--shutdown-timeout` the process now says why and exits 1, and the database
 * rolls back what was in flight (docs/operations.md § Stopping). Without the bound this test hangs
 * until the statement's 30 s bound, past vitest's timeout.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrbitServer } from "../e2e/harness.js";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { DbProxy } from "./db-proxy.js";

describe.skipIf(!PG_URL)("fault: orbit server is stopped while PostgreSQL does not answer", () => {
  const database = `orbit_shutdown_${randomBytes(5).toString("hex")}`;
  beforeAll(() => adminQuery(`CREATE DATABASE ${database}`));
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));

  it("SIGTERM exits within --shutdown-timeout, saying why", { timeout: 20_000 }, async () => {
    const target = new URL(PG_URL!);
    const proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    const url = new URL(PG_URL!);
    url.pathname = `/${database}`;
    const server = await startOrbitServer(["--database", proxy.url(url.href), "--shutdown-timeout", "1s"]);
    try {
      expect((await fetch(`${server.url}/v1/schedules`)).status).toBe(200);
      proxy.stall();
      // A request whose statement now waits for an answer that does not come.
      const hanging = fetch(`${server.url}/v1/schedules`).catch(() => null);
      // An event, polled: its statement reached the stalled proxy (a SIGTERM before that found
      // nothing in flight and stopped cleanly).
      while (proxy.holding === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const code = await server.stop("SIGTERM");
      expect(code).toBe(1);
      expect(server.output()).toContain(
        "orbit: the server did not stop within 1.0s (the database does not answer, or a lock another session holds keeps a statement waiting); exiting, the database rolls back what was in flight\n",
      );
      await hanging;
    } finally {
      proxy.resume();
      await proxy.down();
    }
  });

  it("SIGTERM with the database answering stops cleanly, exit 0", { timeout: 20_000 }, async () => {
    const url = new URL(PG_URL!);
    url.pathname = `/${database}`;
    const server = await startOrbitServer(["--database", url.href, "--shutdown-timeout", "1s"]);
    expect((await fetch(`${server.url}/v1/schedules`)).status).toBe(200);
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(server.output()).not.toContain("did not stop");
  });
});
