/**
 * The whole-number settings flags (`--max-catch-up`, `--pause-on-failure`, `--max-runs`) check the
 * range the server accepts, each its own: one range for all (0 to 1e9) let the CLI accept a value
 * the server then refused with exit 1.
 */
import { describe, expect, it } from "vitest";
import { WHOLE_SETTING_RANGES } from "../../src/domain/schedule.js";
import { validateOutcomeSettings } from "../../src/engine/outcome-settings.js";
import { validateSettings } from "../../src/scheduler/settings.js";
import { FakeServer } from "./fake-server.js";
import { nightlyOrders } from "./fixtures/api.js";

const FLAGS = [
  { flag: "--max-catch-up", key: "max_catch_up", max: "1000" },
  { flag: "--pause-on-failure", key: "pause_on_failure", max: "1000" },
  { flag: "--max-runs", key: "max_runs", max: "1000000000" },
] as const;

function server(): FakeServer {
  return new FakeServer(() => ({ status: 200, body: nightlyOrders }));
}

describe("whole-number settings flags", () => {
  for (const { flag, key, max } of FLAGS) {
    it(`${flag} refuses a value outside 1 to ${max} naming that range, and sends nothing`, async () => {
      for (const value of ["0", String(Number(max) + 1)]) {
        const s = server();
        const r = await s.run(["schedule", "update", "nightly-orders", flag, value]);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(
          `option '${flag} <n>' argument '${value}' is invalid. Give a whole number from 1 to ${max}.`,
        );
        expect(s.requests).toEqual([]);
      }
    });

    it(`${flag} sends 1 and ${max}`, async () => {
      for (const value of ["1", max]) {
        const s = server();
        const r = await s.run(["schedule", "update", "nightly-orders", flag, value]);
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        expect(s.requests[0]?.body).toEqual({ [key]: Number(value) });
      }
    });
  }

  it("says the range in --help", async () => {
    const r = await server().run(["schedule", "create", "--help"]);
    const help = r.stdout.replace(/\s+/g, " ");
    expect(help).toContain(
      "--max-catch-up <n> with --catchup catch_up: start at most n missed occurrences (1 to 1000)",
    );
    expect(help).toContain("--pause-on-failure <n> pause after n consecutive failed executions (1 to 1000)");
    expect(help).toContain("(triggers and backfills do not count) (1 to 1000000000)");
  });

  // The server's bounds are literals in its validators: this fails when one of them moves.
  it("has the ranges the server's validators accept", () => {
    const now = Date.UTC(2026, 10, 15);
    const base = { schedule_id: "s", workflow: "W", cron: "0 2 * * *", catchup: "catch_up" };
    const check: Record<keyof typeof WHOLE_SETTING_RANGES, (n: number) => unknown> = {
      max_catch_up: (n) => validateSettings({ ...base, max_catch_up: n }, now),
      pause_on_failure: (n) => validateOutcomeSettings({ pause_on_failure: n }),
      max_runs: (n) => validateOutcomeSettings({ max_runs: n }),
    };
    for (const [key, [min, max]] of Object.entries(WHOLE_SETTING_RANGES)) {
      const validate = check[key as keyof typeof WHOLE_SETTING_RANGES];
      expect(() => validate(min)).not.toThrow();
      expect(() => validate(max)).not.toThrow();
      expect(() => validate(min - 1)).toThrow(`${key} must be a whole number from ${min} to ${max}`);
      expect(() => validate(max + 1)).toThrow(`${key} must be a whole number from ${min} to ${max}`);
    }
  });
});
