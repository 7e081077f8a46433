/**
 * A cluster server's clock (src/clock/database-clock.ts, docs/cluster.md § One time for the
 * cluster): the host's time moved by the offset measured against the database's, kept when a
 * measurement fails or lands within its own error; measured on the monotonic clock, so a step of
 * the host's wall clock does not move it.
 */
import { expect, it } from "vitest";
import { DatabaseClock } from "../../src/clock/database-clock.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { SystemClock } from "../../src/clock/system-clock.js";

const DB_MS = Date.UTC(2026, 11, 5, 12, 0, 0);

it("keeps the database's time on a host 40 s behind; an injected clock is followed as it moves", async () => {
  const host = new ManualClock(DB_MS - 40_000);
  let db = DB_MS;
  const clock = new DatabaseClock(host, async () => db);
  expect(clock.now()).toBe(DB_MS - 40_000);
  expect(await clock.align()).toBe(true);
  expect(clock.offsetMs).toBe(40_000);
  expect(clock.now()).toBe(DB_MS);
  host.advance(5_000);
  expect(clock.now()).toBe(DB_MS + 5_000);

  // The host steps forward 60 s (NTP catching up): one measurement later the time is the database's.
  host.advance(60_000);
  db = DB_MS + 5_000;
  expect(await clock.align()).toBe(true);
  expect(clock.now()).toBe(DB_MS + 5_000);
});

it("keeps the offset in force when the database does not answer, or answers within the error", async () => {
  const host = new ManualClock(DB_MS);
  let db: number | null = DB_MS + 1_000;
  const clock = new DatabaseClock(host, async () => {
    if (db === null) throw new Error("connection terminated");
    return db;
  });
  expect(await clock.align()).toBe(true);
  expect(clock.now()).toBe(DB_MS + 1_000);
  db = null;
  expect(await clock.align()).toBe(false);
  expect(clock.now()).toBe(DB_MS + 1_000);
  // A millisecond off: within a measurement's error, so the clock does not step back and forth.
  db = DB_MS + 1_001;
  expect(await clock.align()).toBe(true);
  expect(clock.now()).toBe(DB_MS + 1_000);
  db = DB_MS + 1_050;
  await clock.align();
  expect(clock.now()).toBe(DB_MS + 1_050);
});

it("on the host's own clock, a step of the host's wall clock does not move it (a 70 s step took other servers' leases)", async () => {
  const realNow = Date.now;
  const clock = new DatabaseClock(new SystemClock(), async () => realNow() + 40_000);
  try {
    expect(await clock.align()).toBe(true);
    expect(Math.abs(clock.now() - (realNow() + 40_000))).toBeLessThan(50);
    expect(Math.abs(clock.offsetMs - 40_000)).toBeLessThan(50);
    // NTP or a resumed VM steps the host's clock 70 s ahead: this server's time stays the database's.
    Date.now = () => realNow() + 70_000;
    expect(Math.abs(clock.now() - (realNow() + 40_000))).toBeLessThan(50);
    // The next measurement tells the host's offset (for doctor), and keeps the time.
    expect(await clock.align()).toBe(true);
    expect(Math.abs(clock.offsetMs - -30_000)).toBeLessThan(50);
    expect(Math.abs(clock.now() - (realNow() + 40_000))).toBeLessThan(50);
  } finally {
    Date.now = realNow;
  }
});

it("reads the host's time until the first measurement that worked", async () => {
  const host = new ManualClock(DB_MS);
  const clock = new DatabaseClock(host, () => Promise.reject(new Error("ECONNREFUSED")));
  expect(await clock.align()).toBe(false);
  expect(clock.isAligned).toBe(false);
  expect(clock.now()).toBe(DB_MS);
});
