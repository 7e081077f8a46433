/**
 * The UI's short durations (ui/elapsed.js, plain JavaScript served as is) say what the CLI's do
 * (src/cli/durations.ts): an execution's page and `orbit status` show one run's elapsed time in
 * the same words. The UI cannot import the CLI's module, so the two are compared here.
 */
import { expect, it } from "vitest";
import { shortDuration as cliDuration } from "../../src/cli/durations.js";
// @ts-expect-error plain JavaScript of the UI, without declarations
import { shortDuration as uiDuration } from "../../ui/elapsed.js";

it("gives the same text as the CLI from 0 ms to 40 days, at every unit's edges", () => {
  const edges = [
    0, 1, 999, 1000, 1049, 1050, 59_949, 59_950, 59_999, 60_000, 3_599_999, 3_600_000, 86_399_999, 86_400_000,
  ];
  const spread = Array.from({ length: 2000 }, (_, i) => Math.floor(1.011 ** i));
  for (const ms of [...edges, ...spread.filter((ms) => ms < 40 * 86_400_000), -5]) {
    expect({ ms, text: (uiDuration as (ms: number) => string)(ms) }).toEqual({ ms, text: cliDuration(ms) });
  }
});
