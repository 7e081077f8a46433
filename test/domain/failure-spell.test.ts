/**
 * A repeating failure as the server's log tells it (src/domain/failure-spell.ts): the first with
 * its error, then every 30 s, then once when it works again; a failure after 30 s of quiet opens a
 * new spell. The background passes (DeadlineLoop: the reaper, timeouts, webhooks) say it so: each
 * logged every failure with its stack, five lines a second through a database outage.
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { LoggedFailures, passLines } from "../../src/domain/failure-spell.js";
import { DeadlineLoop } from "../../src/engine/deadline-loop.js";
import { logLines } from "../helpers/log-lines.js";

it("says a failure once, then every 30 s with how long, and when it works again", () => {
  let now = 0;
  const { lines, log } = logLines();
  const f = new LoggedFailures(log, () => now, passLines("reaping", "retrying"));
  const boom = new Error("connection terminated");
  for (; now <= 65_000; now += 1000) f.failed(boom);
  f.succeeded();
  now += 10_000;
  f.succeeded(); // it has worked 10 s: the spell ends
  f.succeeded(); // nothing more: no spell is on
  expect(lines.map((l) => [l.level, l.msg])).toEqual([
    ["error", "reaping failed; retrying"],
    ["error", "reaping still fails; retrying"],
    ["error", "reaping still fails; retrying"],
    ["info", "reaping works again"],
  ]);
  expect(lines[0]?.fields).toEqual({ err: boom });
  expect(lines[1]?.fields).toEqual({ error: "connection terminated", failing_for_s: 30 });
  expect(lines[3]?.fields).toEqual({ failed_for_s: 66, failures: 66 });
});

it("opens a new spell after 30 s without a failure, for failures nothing ends", () => {
  let now = 0;
  const { lines, log } = logLines();
  const idle = new LoggedFailures(
    log,
    () => now,
    { failed: "an idle database connection failed", still: "idle database connections still fail" },
    "warn",
  );
  idle.failed(new Error("a"));
  now = 10_000;
  idle.failed(new Error("b")); // within the spell, before its 30 s line: nothing
  now = 45_000;
  idle.failed(new Error("c")); // 35 s of quiet: a new drop, said with its error
  expect(lines.map((l) => [l.level, l.msg, (l.fields.err as Error).message])).toEqual([
    ["warn", "an idle database connection failed", "a"],
    ["warn", "an idle database connection failed", "c"],
  ]);
});

it("is how a background pass tells its failures, and its recovery", async () => {
  const clock = new ManualClock(0);
  const { lines, log } = logLines();
  const failures = new LoggedFailures(log, () => clock.now(), passLines("sending webhooks", "retrying"));
  let failing = true;
  let passes = 0;
  const loop = new DeadlineLoop({
    clock,
    pass: async () => {
      passes++;
      if (failing) throw new Error("the database is unavailable");
    },
    nextDueMs: async () => null,
    maxSleepMs: 1000,
    minSleepMs: 10,
    onError: (err) => failures.failed(err),
    onSuccess: () => failures.succeeded(),
  });
  loop.start();
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 40; i++) {
    while (clock.pendingSleeps === 0) await turn();
    clock.advance(1000);
  }
  failing = false;
  while (!lines.some((l) => l.msg === "sending webhooks works again")) {
    if (clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
  await loop.close();
  expect(passes).toBeGreaterThan(40);
  expect(lines.map((l) => l.msg)).toEqual([
    "sending webhooks failed; retrying",
    "sending webhooks still fails; retrying",
    "sending webhooks works again",
  ]);
});

it("says a spell's stack once in 30 s: short spells after it are one line each", () => {
  // A connection terminated every 13 s, working in between: each spell ends (it worked 10 s) and
  // wrote the pg-protocol stack again before.
  let now = 0;
  const { lines, log } = logLines();
  const listen = new LoggedFailures(log, () => now, passLines("task LISTEN connection", "retrying"), "warn");
  const terminated = new Error("terminating connection due to administrator command");
  for (; now < 60_000; now += 1000) {
    listen.failed(terminated);
    now += 12_000;
    listen.succeeded(10_000); // up 10 s since its reconnection (PostgresListener's stableMs)
  }
  const failed = lines.filter((l) => l.msg === "task LISTEN connection failed; retrying");
  // With the stack at 0 s and again once 30 s have passed (at 39 s); one line between.
  expect(failed.map((l) => ("err" in l.fields ? "stack" : "line"))).toEqual(["stack", "line", "line", "stack", "line"]);
  expect(failed[1]?.fields).toEqual({ error: "terminating connection due to administrator command" });
  expect(lines.filter((l) => l.msg === "task LISTEN connection works again")).toHaveLength(5);
});

it("ends a spell without a line when what failed no longer has to work", () => {
  let now = 0;
  const { lines, log } = logLines();
  const firing = new LoggedFailures(log, () => now, passLines("firing", "retrying in 1 s"));
  firing.failed(new Error("the database is unavailable"));
  now = 73_000;
  firing.forget();
  firing.succeeded();
  expect(lines.map((l) => l.msg)).toEqual(["firing failed; retrying in 1 s"]);
});

it("counts a spell from the start of the attempt that failed, not from its failure", async () => {
  // A database that stops answering fails a statement only at its 30 s answer timeout: a pass that
  // began at 0 and failed at 30 s, then one at 31 s that failed at once, then one that worked at 47 s.
  // failed_for_s said 17 where firing had stopped for 47 s (a tester froze PostgreSQL for 45 s).
  const clock = new ManualClock(0);
  const { lines, log } = logLines();
  const failures = new LoggedFailures(log, () => clock.now(), passLines("firing", "retrying in 1 s"));
  const outcomes: (() => Promise<void>)[] = [
    () => clock.sleep(30_000).then(() => Promise.reject(new Error("no answer within 30000 ms"))),
    () => Promise.reject(new Error("connect ECONNREFUSED")),
    async () => {},
  ];
  const loop = new DeadlineLoop({
    clock,
    pass: () => (outcomes.shift() ?? (async () => {}))(),
    nextDueMs: async () => null,
    maxSleepMs: 16_000,
    minSleepMs: 10,
    errorSleepMs: 1000,
    onError: (err, startedMs) => failures.failed(err, startedMs),
    onSuccess: () => failures.succeeded(),
  });
  loop.start();
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  // The pass at 47 s works; the next, 16 s later, says so (it has worked 10 s by then).
  for (const step of [30_000, 1000, 16_000, 16_000]) {
    while (clock.pendingSleeps === 0) await turn();
    clock.advance(step);
  }
  while (!lines.some((l) => l.msg === "firing works again")) await turn();
  await loop.close();
  expect(lines.map((l) => l.msg)).toEqual(["firing failed; retrying in 1 s", "firing works again"]);
  expect(lines[1]?.fields).toEqual({ failed_for_s: 47, failures: 2 });
});
