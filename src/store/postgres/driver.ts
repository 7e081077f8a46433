/**
 * node-postgres, loaded when the first PostgreSQL store, listener or leadership connection is
 * opened rather than with the server's modules: a server on SQLite (the default) never loads it,
 * which was about 70 ms of its start (docs/benchmarks.md § Starting a process).
 */
import type pgModule from "pg";

export type Pg = typeof pgModule;

let loaded: Promise<Pg> | null = null;

export function loadPg(): Promise<Pg> {
  loaded ??= import("pg").then((m) => m.default);
  return loaded;
}
