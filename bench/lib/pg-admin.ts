/** One statement on the benchmark's PostgreSQL as its owner (creating and dropping throwaway schemas). */
import pg from "pg";
import { PG_URL } from "./fire-env.js";

export async function adminSql(sql: string, url: string = PG_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
