/**
 * A worker's spells of failed polls or heartbeats as its log tells them (src/worker/logged-spell.ts):
 * a link that flaps (a connection dropped every 3 s, each spell one failure long) wrote a `failed`
 * and an `again` line per drop, about 40 a minute (a tester's proxy). Spells opening within 30 s of
 * the last one said are quiet, and the next line said counts them.
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { LoggedSpell } from "../../src/worker/logged-spell.js";

const LINES = {
  first: "polling failed",
  still: "polling still fails",
  again: "polling again",
  counted: "failed_polls",
};

function capture(): {
  said: [string, string, unknown][];
  log: Record<"info" | "warn" | "error", (m: string, f?: unknown) => void>;
} {
  const said: [string, string, unknown][] = [];
  const at = (level: string) => (m: string, f?: unknown) => void said.push([level, m, f]);
  return { said, log: { info: at("info"), warn: at("warn"), error: at("error") } };
}

it("says a flapping link's drops once per 30 s, counting the quiet ones, and a lasting spell as ever", () => {
  const clock = new ManualClock(0);
  const { said, log } = capture();
  const spell = new LoggedSpell(clock, log, LINES);
  const drop = new Error("socket hang up");
  // A drop every 3 s for a minute: each one failure, then a success a second later.
  for (let i = 0; i < 20; i++) {
    spell.failed(drop);
    clock.advance(1000);
    spell.succeeded();
    clock.advance(2000);
  }
  expect(said).toEqual([
    ["warn", "polling failed", { error: "socket hang up" }],
    ["info", "polling again", { failed_for_s: 1, failed_polls: 1 }],
    ["warn", "polling failed", { error: "socket hang up", quiet_spells: 9 }],
    ["info", "polling again", { failed_for_s: 1, failed_polls: 1 }],
  ]);
  said.length = 0;
  // 30 s on, a drop is said again, with the quiet ones since; a spell opening 3 s after it is quiet,
  // but one that lasts is said at its 30 s line, and when it ends.
  clock.advance(30_000);
  spell.failed(drop);
  spell.succeeded();
  clock.advance(3000);
  for (let s = 0; s <= 31; s++) {
    spell.failed(drop);
    clock.advance(1000);
  }
  spell.succeeded();
  expect(said).toEqual([
    ["warn", "polling failed", { error: "socket hang up", quiet_spells: 9 }],
    ["info", "polling again", { failed_for_s: 0, failed_polls: 1 }],
    ["warn", "polling still fails", { error: "socket hang up", failing_for_s: 30 }],
    ["info", "polling again", { failed_for_s: 32, failed_polls: 32 }],
  ]);
});
