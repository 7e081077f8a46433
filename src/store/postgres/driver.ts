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

const INT8_OID = 20;

/** BIGINT columns hold epoch ms and counters: return JS numbers, refusing any beyond 2^53. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`BIGINT ${text} does not fit a JavaScript number`);
  return n;
}

/** The pools' type parsers: pg's own, but BIGINT as a number ({@link parseInt8}). */
export function typesOf(driver: Pg): pgModule.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID && format !== "binary"
        ? parseInt8
        : driver.types.getTypeParser(oid, format as "text")) as pgModule.CustomTypesConfig["getTypeParser"],
  };
}
