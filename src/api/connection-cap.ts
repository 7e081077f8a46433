/**
 * The connections this process accepts at once, so that connections cannot take every file
 * descriptor the process may open: SQLite's files, PostgreSQL's sockets and the log need theirs.
 * A tester's 21,000 connections that never sent a byte took the 20,000 this process may open, and
 * the firing loop then failed "the SQLite database cannot be written (SQLITE_CANTOPEN …)" and
 * missed occurrences until the clients went away. Past the bound Node closes each new connection
 * as it comes (its `drop` event), said in the log once a minute at most (docs/security.md § Limits).
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:net";

/** The share of the open-file limit connections may take; the rest is kept for the store and the log. */
export const CONNECTION_SHARE = 0.75;
/** However low the limit, this many connections are taken. */
export const MIN_CONNECTIONS = 64;
const SAID_EVERY_MS = 60_000;

/** The soft limit of open files from /proc/self/limits (Linux), or null where it cannot be read. */
export function openFileLimit(limitsText?: string): number | null {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/limits", "utf8");
    } catch {
      return null;
    }
  }
  const line = text.split("\n").find((l) => l.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (soft === undefined || !/^\d+$/.test(soft)) return null; // "unlimited", or not found
  return Number(soft);
}

/** The bound for a process allowed `limit` open files; null (no bound) when the limit is unknown. */
export function connectionCap(limit: number | null): number | null {
  return limit === null ? null : Math.max(MIN_CONNECTIONS, Math.floor(limit * CONNECTION_SHARE));
}

/** Bounds `server`'s connections by this process's open-file limit; drops are logged once a minute. */
export function capConnections(
  server: Server,
  log: { warn(obj: object, msg: string): void },
  limit = openFileLimit(),
): number | null {
  const cap = connectionCap(limit);
  if (cap === null) return null;
  server.maxConnections = cap;
  let saidAt = Number.NEGATIVE_INFINITY;
  let dropped = 0;
  server.on("drop", () => {
    dropped++;
    const now = performance.now();
    if (now - saidAt < SAID_EVERY_MS) return;
    saidAt = now;
    log.warn(
      { maxConnections: cap, dropped },
      `new connections refused: ${cap} are open, the most this server takes (${CONNECTION_SHARE * 100} % of its ${limit} open files); a client opens connections without closing them`,
    );
    dropped = 0;
  });
  return cap;
}
