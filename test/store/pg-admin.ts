/**
 * PostgreSQL administration for the store tests that need more than a schema: SQL as one session
 * (a pg_dump's text, a CREATE DATABASE), and a plain dump renamed to another schema.
 */
import pg from "pg";
import { PG_URL } from "../helpers/db.js";

/** Runs `sql` as one admin session (pg_dump's psql meta-commands such as \restrict left out). */
export async function adminSql(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(
      sql
        .split("\n")
        .filter((line) => !line.startsWith("\\"))
        .join("\n"),
    );
  } finally {
    await client.end();
  }
}

/** Loads a pg_dump of `from` as schema `to` (every qualified name renamed). */
export function renamed(dump: string, from: string, to: string): string {
  return dump.replace(new RegExp(`\\b${from}\\b`, "g"), to);
}
