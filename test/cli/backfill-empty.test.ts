/**
 * `orbit schedule backfill` of a range that holds no occurrence says why on stderr (docs/cli.md §
 * orbit schedule backfill): "0 occurrences, 0 started" of a range before the schedule's start_at
 * said nothing more (a tester).
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const RANGE = ["--start-at", "2026-11-01T00:00:00Z", "--end-at", "2026-11-02T00:00:00Z"];

function server(schedule: Record<string, unknown> | null): FakeServer {
  return new FakeServer((req) => {
    if (req.method === "POST") {
      return {
        status: 200,
        body: {
          start_at: "2026-11-01T00:00:00Z",
          end_at: "2026-11-02T00:00:00Z",
          occurrences: 0,
          started: 0,
          already_existed: 0,
        },
      };
    }
    return schedule === null ? undefined : { status: 200, body: { schedule_id: "x", ...schedule } };
  });
}

describe("orbit schedule backfill of an empty range", () => {
  it("names the schedule's start_at when the range ends before it", async () => {
    const r = await server({ start_at: "2027-01-01T00:00:00Z", end_at: null }).run([
      "schedule",
      "backfill",
      "x",
      ...RANGE,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "backfilled x from 2026-11-01T00:00:00Z to 2026-11-02T00:00:00Z: 0 occurrences, 0 started, 0 already existed\n",
    );
    expect(r.stderr).toBe("(the range ends before x starts: its start_at is 2027-01-01T00:00:00Z)\n");
  });

  it("names its end_at when the range begins after it", async () => {
    const r = await server({ start_at: null, end_at: "2026-10-01T00:00:00Z" }).run([
      "schedule",
      "backfill",
      "x",
      ...RANGE,
    ]);
    expect(r.stderr).toBe("(the range begins after x ends: its end_at is 2026-10-01T00:00:00Z)\n");
  });

  it("otherwise points to the timing, also when the schedule cannot be read", async () => {
    const why = "(no occurrence of x's timing falls in that range: `orbit schedule get x` shows its timing)\n";
    expect((await server({ cron: "0 0 29 2 *" }).run(["schedule", "backfill", "x", ...RANGE])).stderr).toBe(why);
    expect((await server(null).run(["schedule", "backfill", "x", ...RANGE])).stderr).toBe(why);
  });

  it("says nothing more with --json", async () => {
    const r = await server({ start_at: "2027-01-01T00:00:00Z" }).run(["schedule", "backfill", "x", ...RANGE, "--json"]);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout).occurrences).toBe(0);
  });
});
