import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCron } from "../../src/time/cron-parse.js";
import { describeCron, describeInterval, durationText } from "../../src/time/describe.js";

const cases: Array<[string, string]> = [
  // The seed's table.
  ["0 2 * * *", "At 02:00, every day"],
  ["*/15 * * * *", "Every 15 minutes"],
  ["30 9 * * MON-FRI", "At 09:30, Monday through Friday"],
  ["0 0 1 JAN,JUL *", "At 00:00, on day 1 of the month, in January and July"],
  ["5/20 * * * *", "At minutes 5, 25 and 45 past every hour"],
  ["0 0 29 2 *", "At 00:00, on day 29 of the month, in February"],
  // Vixie: both day fields restricted → either matches; one starting with `*` → both must match.
  ["0 0 13 * 5", "At 00:00, on day 13 of the month or on Friday"],
  ["0 0 */14 * 4", "At 00:00, on days 1, 15 and 29 of the month if it is a Thursday"],
  ["0 0 1-31 * 5", "At 00:00, every day"],
  // Quartz extensions.
  ["0 0 L * *", "At 00:00, on the last day of the month"],
  ["0 0 L-2 * *", "At 00:00, on the day 2 days before the last day of the month"],
  ["0 0 L-1 * *", "At 00:00, on the day before the last day of the month"],
  ["0 0 1,L-1 * *", "At 00:00, on day 1 of the month and on the day before the last day of the month"],
  ["0 0 15W * *", "At 00:00, on the weekday nearest day 15 of the month"],
  ["0 0 LW * *", "At 00:00, on the last weekday of the month"],
  ["0 0 * * 5L", "At 00:00, on the last Friday of the month"],
  ["0 0 ? * 5L", "At 00:00, on the last Friday of the month"],
  ["0 0 * * MON#2", "At 00:00, on the second Monday of the month"],
  ["0 0 L * 5", "At 00:00, on the last day of the month or on Friday"],
  // Seconds.
  ["*/10 * * * * *", "Every 10 seconds"],
  ["0 30 2 * * *", "At 02:30:00, every day"],
  ["30 * * * * *", "At second 30 past every minute"],
  ["*/5 * 9 * * *", "Every 5 seconds, between 09:00 and 09:59"],
  // Macros and other shapes.
  ["@hourly", "Every hour"],
  ["@daily", "At 00:00, every day"],
  ["@weekly", "At 00:00, on Sunday"],
  ["@monthly", "At 00:00, on day 1 of the month"],
  ["* * * * *", "Every minute"],
  ["0/15 * * * *", "Every 15 minutes"],
  ["0,15,30,45 * * * *", "Every 15 minutes"],
  ["0 */2 * * *", "Every 2 hours"],
  ["30 */2 * * *", "At minute 30, every 2 hours"],
  ["0 9-17 * * *", "Every hour between 09:00 and 17:59"],
  ["*/15 9-17 * * MON-FRI", "Every 15 minutes, between 09:00 and 17:59, Monday through Friday"],
  ["0 1,3,5,7,9,11,13 * * *", "At minute 0 past hours 1, 3, 5, 7, 9, 11 and 13"],
  ["0 0,12 * * *", "At 00:00 and 12:00, every day"],
  ["0-10 * * * *", "At minutes 0 through 10 past every hour"],
  ["3/5 * * * *", "Every 5 minutes from minute 3"],
  ["0 0 * * 6,0", "At 00:00, on Saturday and Sunday"],
  ["0 0 * * 1,3,5", "At 00:00, on Monday, Wednesday and Friday"],
  ["0 0 1,L * *", "At 00:00, on day 1 of the month and on the last day of the month"],
  ["0 0 1-7 * *", "At 00:00, on days 1 through 7 of the month"],
  ["0 0 * */3 *", "At 00:00, every day, in January, April, July and October"],
];

describe("describeCron", () => {
  it.each(cases)("%s → %s", (expression, text) => {
    expect(describeCron(parseCron(expression))).toBe(text);
  });
});

describe("docs/cli.md § Descriptions", () => {
  it("shows each expression's description exactly as preview prints it", () => {
    const doc = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("### Descriptions"), doc.indexOf("\n## ", doc.indexOf("### Descriptions")));
    const rows = [...section.matchAll(/^\| `([^`]+)` +\| (.+?) +\|$/gm)].map((m) => [m[1], m[2]]);
    expect(rows.length).toBeGreaterThan(10);
    for (const [expression, text] of rows) {
      expect({ expression, text: describeCron(parseCron(expression as string)) }).toEqual({ expression, text });
    }
  });
});

describe("describeInterval", () => {
  it("names the anchor", () => {
    expect(describeInterval(10_000)).toBe("Every 10 seconds, aligned to the Unix epoch");
    expect(describeInterval(10_000, Date.UTC(2026, 10, 15, 18, 51, 0, 347))).toBe(
      "Every 10 seconds, aligned to start_at 2026-11-15T18:51:00.347Z",
    );
  });

  it("spells durations", () => {
    expect(durationText(3_600_000)).toBe("hour");
    expect(durationText(5_400_000)).toBe("1 hour and 30 minutes");
    expect(durationText(1500)).toBe("1 second and 500 milliseconds");
    expect(durationText(7 * 86_400_000)).toBe("7 days");
    expect(describeInterval(60_000)).toBe("Every minute, aligned to the Unix epoch");
  });
});
