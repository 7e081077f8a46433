/** A real server in-process on a temp SQLite file (or a PostgreSQL schema), driven with fetch. */

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/server.js";
import { parseInstant } from "../../src/time/format.js";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { ORDER_INPUT, ORDER_SCHEMA } from "../helpers/seed.js";

export const SEED_NOW = "2026-11-15T18:51:00.347Z";

/** The seed's curl body. */
export const SEED_SCHEDULE = {
  schedule_id: "orders-every-10s",
  workflow: "OrderProcessing",
  interval: "10s",
  input: ORDER_INPUT,
};

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test answers are read field by field
  body: any;
  text: string;
}

export interface TestServer {
  server: RunningServer;
  clock: ManualClock;
  dir: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** Registers OrderProcessing@1.0.0. */
  registerOrders(): Promise<void>;
  /** `call`, throwing unless the status is below 300; the body. */
  // biome-ignore lint/suspicious/noExplicitAny: test answers are read field by field
  ok(method: string, path: string, body?: unknown): Promise<any>;
  /** Polls (without sleeping on the wall clock for long) until `check` holds. */
  until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startTestServer(options: Partial<ServerOptions> = {}, now = SEED_NOW): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-api-"));
  const clock = new ManualClock(parseInstant(now));
  const server = await startServer({ port: 0, dataDir: dir, clock, logger: "silent", ...options });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    // Writes say JSON even without a body, as every Orbit client does (docs/security.md).
    const init: RequestInit = {
      method,
      headers:
        method === "GET" || method === "HEAD" ? { ...headers } : { "content-type": "application/json", ...headers },
    };
    if (body !== undefined) {
      init.headers = { "content-type": "application/json", ...headers };
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    const res = await fetch(server.url + path, init);
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    server,
    clock,
    dir,
    call,
    async registerOrders() {
      const r = await call("POST", "/v1/workflows", {
        name: "OrderProcessing",
        version: "1.0.0",
        input_schema: ORDER_SCHEMA,
      });
      if (r.status !== 201 && r.status !== 200) throw new Error(`register failed: ${r.text}`);
    },
    async ok(method, path, body) {
      const r = await call(method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
      return r.body;
    },
    async until(read, check, what) {
      let last: unknown;
      for (let i = 0; i < 500; i++) {
        const value = await read();
        if (check(value)) return value;
        last = value;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // The last value read says why (a status and a message: a timeout alone said nothing).
      const shown = JSON.stringify(last, (k, v) => (k === "headers" ? undefined : v)) ?? String(last);
      throw new Error(`timed out waiting for ${what}; the last read: ${shown.slice(0, 500)}`);
    },
    async stop() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { ORDER_INPUT, ORDER_SCHEMA };

/**
 * A test server on `dialect`: SQLite in a temporary folder, or PostgreSQL in a schema of its own
 * (named `<prefix>_<random>`), which `stop()` drops.
 */
export async function startDialectServer(dialect: "sqlite" | "postgres", prefix: string): Promise<TestServer> {
  if (dialect === "sqlite") return startTestServer();
  const schema = `${prefix}_${randomBytes(5).toString("hex")}`;
  await adminQuery(`CREATE SCHEMA ${schema}`);
  const t = await startTestServer({ database: PG_URL, databaseSchema: schema });
  return {
    ...t,
    async stop() {
      await t.stop();
      await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}
