/**
 * A spell of the server's passes ends once what failed has worked 10 s without failing again
 * (src/domain/failure-spell.ts, SPELL_SETTLE_MS): connections killed every second or two (a
 * tester's pg_terminate_backend loop) wrote `firing failed; retrying in 1 s` and `firing works
 * again` in turn about 25 times in 30 s, the LISTEN and leadership connections 13 to 15 times a
 * minute each. A burst of one warning (the reaper's grace) is said once, then every 30 s with how
 * many were held back (HeldBackLine).
 */
import { expect, it } from "vitest";
import { HeldBackLine, LoggedFailures, passLines } from "../../src/domain/failure-spell.js";
import { type LogLine as Line, logLines } from "../helpers/log-lines.js";

it("a failure every 2 s that works in between is one spell: said once, every 30 s, and once it has worked 10 s", () => {
  let now = 0;
  const { lines, log } = logLines();
  const firing = new LoggedFailures(log, () => now, passLines("firing", "retrying in 1 s"));
  const killed = new Error("terminating connection due to administrator command");
  for (; now < 60_000; now += 1000) {
    firing.failed(killed);
    now += 1000;
    firing.succeeded();
  }
  // Killed no more: the rounds work on, and 10 s after the first the spell ends.
  for (; now <= 80_000; now += 1000) firing.succeeded();
  expect(lines.map((l) => [l.level, l.msg])).toEqual([
    ["error", "firing failed; retrying in 1 s"],
    ["error", "firing still fails; retrying in 1 s"],
    ["info", "firing works again"],
  ]);
  expect(lines[1]?.fields).toEqual({ error: killed.message, failing_for_s: 30, failures: 16, worked_briefly: 15 });
  expect(lines[2]?.fields).toEqual({ failed_for_s: 59, failures: 30, worked_briefly: 29 });
});

it("a poll every second (the leadership connection) says it works again 10 s after its first success", () => {
  let now = 0;
  const { lines, log } = logLines();
  const leadership = new LoggedFailures(log, () => now, passLines("leadership connection", "retrying every second"));
  leadership.failed(new Error("connect ECONNREFUSED"));
  const again = (): Line[] => lines.filter((l) => l.msg === "leadership connection works again");
  for (now = 1000; now < 11_000; now += 1000) leadership.succeeded();
  expect(again()).toEqual([]);
  leadership.succeeded();
  expect(again().map((l) => l.fields)).toEqual([{ failed_for_s: 1, failures: 1 }]);
});

it("a success said to have lasted (a LISTEN connection up 10 s) ends the spell at once", () => {
  let now = 0;
  const { lines, log } = logLines();
  const listen = new LoggedFailures(log, () => now, passLines("task LISTEN connection", "retrying"), "warn");
  listen.failed(new Error("terminated"));
  now = 11_000; // reconnected at 1 s, up since
  listen.succeeded(10_000);
  expect(lines.map((l) => [l.msg, l.fields.failed_for_s])).toEqual([
    ["task LISTEN connection failed; retrying", undefined],
    ["task LISTEN connection works again", 1],
  ]);
});

it("a spell that worked 10 s and met no success since is said to work again before the next failure", () => {
  let now = 0;
  const { lines, log } = logLines();
  const reaping = new LoggedFailures(log, () => now, passLines("reaping expired worker leases", "retrying"));
  reaping.failed(new Error("a"));
  now = 1000;
  reaping.succeeded();
  now = 20_000; // the next pass, 19 s later, fails
  reaping.failed(new Error("b"));
  expect(lines.map((l) => [l.msg, l.fields])).toEqual([
    ["reaping expired worker leases failed; retrying", { err: new Error("a") }],
    ["reaping expired worker leases works again", { failed_for_s: 1, failures: 1 }],
    ["reaping expired worker leases failed; retrying", { error: "b" }],
  ]);
});

it("a repeated warning is said once, then at most every 30 s with how many were held back", () => {
  let now = 0;
  const line = new HeldBackLine(() => now);
  const said: unknown[] = [];
  for (let i = 0; i < 17; i++) said.push(line.occurred());
  expect(said).toEqual([{ heldBack: 0 }, ...Array(16).fill(null)]);
  expect(line.due()).toBeNull(); // not 30 s yet
  now = 31_000;
  expect(line.due()).toEqual({ heldBack: 16, forS: 31 });
  expect(line.due()).toBeNull();
  expect(line.occurred()).toBeNull(); // within 30 s of the summary
  now = 70_000;
  expect(line.occurred()).toEqual({ heldBack: 1 });
});
