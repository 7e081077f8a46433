/**
 * `orbit schedule occurrences ID --limit N` cut at N rows said nothing of the rows after them, as
 * `orbit ps` and `orbit schedule list` do on stderr: the newest 3 read as the whole ledger (a
 * tester). Said on stderr only, so stdout stays the table; --json has `next_cursor` instead.
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

/** Ledger row `id` of schedule s (started, newest first by id). */
const row = (id: number) => ({
  id,
  kind: "started",
  occurrence: `2026-11-15T18:5${id}:00Z`,
  execution_id: `s:2026-11-15T18:5${id}:00Z`,
  status: "COMPLETED",
  recorded_at: `2026-11-15T18:5${id}:00.1Z`,
});

/** A ledger of five rows, paged newest first as the server pages it (`cursor`: the last id given). */
const ledger = new FakeServer((req) => {
  if (!req.path.startsWith("/v1/schedules/s/occurrences")) return undefined;
  const query = new URL(req.path, "http://x").searchParams;
  const before = Number(query.get("cursor") ?? 6);
  const limit = Number(query.get("limit") ?? 100);
  const rows = [5, 4, 3, 2, 1].filter((id) => id < before).slice(0, limit);
  const more = rows.length > 0 && rows[rows.length - 1]! > 1;
  return { status: 200, body: { occurrences: rows.map(row), next_cursor: more ? String(rows.at(-1)) : null } };
});

describe("orbit schedule occurrences --limit", () => {
  it("says on stderr that more rows exist when --limit cut the ledger", async () => {
    const r = await ledger.run(["schedule", "occurrences", "s", "--limit", "3"]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n").filter((l) => l.includes("started"))).toHaveLength(3);
    expect(r.stderr).toBe("(the newest 3 shown; more with a larger --limit, or without it)\n");
  });

  it("says nothing when every row is shown, or with --json", async () => {
    for (const argv of [
      ["schedule", "occurrences", "s"],
      ["schedule", "occurrences", "s", "--limit", "5"],
      ["schedule", "occurrences", "s", "--limit", "3", "--json"],
    ]) {
      const r = await ledger.run(argv);
      expect([argv.join(" "), r.code, r.stderr]).toEqual([argv.join(" "), 0, ""]);
    }
    const json = await ledger.run(["schedule", "occurrences", "s", "--limit", "3", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ next_cursor: "3" });
  });
});
