/**
 * docs/storage.md § PostgreSQL states each server's connection budget, for sizing
 * `max_connections` (a tester's 6 servers nearly filled the default 100): its numbers are the
 * code's.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { HELD_FIRES_AT_ONCE, HELD_LOCK_WAIT_MS } from "../../src/scheduler/held-rows.js";
import { APART_CONNECTIONS } from "../../src/store/postgres/postgres-store.js";

it("docs/storage.md gives the pool, the pool apart and the held-row fires as the code has them", () => {
  const doc = readFileSync(new URL("../../docs/storage.md", import.meta.url), "utf8").replace(/\s+/g, " ");
  const cell = (name: string): string | undefined => new RegExp(`\\| ${name} +\\| (\\d+) +\\|`).exec(doc)?.[1];
  expect(cell("the pool")).toBe("10");
  expect(cell("the pool apart")).toBe(String(APART_CONNECTIONS));
  expect(cell("worker tasks' `LISTEN`")).toBe("1");
  expect(doc).toContain(`so ${10 + APART_CONNECTIONS + 1} for a single server`);
  expect(doc).toContain(
    `waiting in the row's lock queue at most ${HELD_LOCK_WAIT_MS / 1000} s, up to ${HELD_FIRES_AT_ONCE} such fires at once`,
  );
});
