import { describe, expect, it } from "vitest";
import { type DecideInput, decide, decideTrigger } from "../../src/scheduler/decide.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { compileTiming } from "../../src/time/schedule-timing.js";

const t = (s: string): number => parseInstant(s);
const iso = (ms: number | null): string | null => (ms === null ? null : formatInstant(ms));

function input(over: Partial<DecideInput> & { interval?: string; cron?: string }): DecideInput {
  const timing = compileTiming(
    over.cron === undefined ? { interval: over.interval ?? "10m" } : { cron: over.cron },
  ).timing;
  return {
    scheduleId: "s",
    timing,
    overlap: "skip",
    catchup: "skip_missed",
    maxCatchUp: null,
    catchupWindowMs: null,
    jitterMs: 0,
    nextFireMs: t("2026-11-15T00:10:00Z"),
    now: t("2026-11-15T00:10:00.250Z"),
    graceMs: 60_000,
    buffered: [],
    blocker: "none",
    ...over,
  };
}

const starts = (p: ReturnType<typeof decide>): string[] => p.starts.map((s) => formatInstant(s.occurrence));

describe("decide: on time", () => {
  it("starts the due occurrence and advances to the next", () => {
    const plan = decide(input({}));
    expect(starts(plan)).toEqual(["2026-11-15T00:10:00Z"]);
    expect(iso(plan.nextFireMs)).toBe("2026-11-15T00:20:00Z");
    expect(plan.skipped).toBe(0);
  });

  it("does nothing before the occurrence is due", () => {
    const plan = decide(input({ now: t("2026-11-15T00:09:59.999Z") }));
    expect(plan.starts).toEqual([]);
    expect(plan.advanced).toBe(false);
    expect(iso(plan.nextFireMs)).toBe("2026-11-15T00:10:00Z");
  });
});

describe("decide: catch-up (docs/design.md § Catch-up and the seed's examples)", () => {
  // The seed: a 10-minute schedule whose server was down from 00:00 to 00:35.
  const down = { nextFireMs: t("2026-11-15T00:10:00Z"), now: t("2026-11-15T00:35:00Z") };

  it("run_once starts s:2026-11-15T00:30:00Z and counts the older two as skipped", () => {
    const plan = decide(input({ ...down, catchup: "run_once" }));
    expect(starts(plan)).toEqual(["2026-11-15T00:30:00Z"]);
    expect(plan.ledger[0]).toEqual({
      kind: "missed",
      count: 2,
      from: t("2026-11-15T00:10:00Z"),
      to: t("2026-11-15T00:20:00Z"),
    });
    expect(plan.skipped).toBe(2);
    expect(iso(plan.nextFireMs)).toBe("2026-11-15T00:40:00Z");
  });

  it("skip_missed starts nothing older than the grace", () => {
    const plan = decide(input(down));
    expect(plan.starts).toEqual([]);
    expect(plan.skipped).toBe(3);
    expect(iso(plan.nextFireMs)).toBe("2026-11-15T00:40:00Z");
  });

  it("skip_missed still starts an occurrence at most 60 s late, and not one 61 s late", () => {
    expect(starts(decide(input({ now: t("2026-11-15T00:11:00Z") })))).toEqual(["2026-11-15T00:10:00Z"]);
    const late = decide(input({ now: t("2026-11-15T00:11:00.001Z") }));
    expect(late.starts).toEqual([]);
    expect(late.ledger).toEqual([
      { kind: "missed", count: 1, from: t("2026-11-15T00:10:00Z"), to: t("2026-11-15T00:10:00Z") },
    ]);
  });

  it("catch_up starts the most recent max_catch_up missed ones, oldest first", () => {
    const plan = decide(input({ ...down, catchup: "catch_up", maxCatchUp: 2, overlap: "allow" }));
    expect(starts(plan)).toEqual(["2026-11-15T00:20:00Z", "2026-11-15T00:30:00Z"]);
    expect(plan.skipped).toBe(1);
  });

  it("catch_up with skip starts one, the rest are skipped for overlap", () => {
    const plan = decide(input({ ...down, catchup: "catch_up", maxCatchUp: 3 }));
    expect(starts(plan)).toEqual(["2026-11-15T00:10:00Z"]);
    expect(plan.ledger.filter((l) => l.kind === "skipped").map((l) => (l.kind === "skipped" ? l.reason : ""))).toEqual([
      "overlap",
      "overlap",
    ]);
  });

  it("catch_up with buffer_all starts one and buffers the rest", () => {
    const plan = decide(input({ ...down, catchup: "catch_up", maxCatchUp: 3, overlap: "buffer_all" }));
    expect(starts(plan)).toEqual(["2026-11-15T00:10:00Z"]);
    expect(plan.buffered.map(formatInstant)).toEqual(["2026-11-15T00:20:00Z", "2026-11-15T00:30:00Z"]);
  });

  it("catchup_window keeps older missed occurrences from starting", () => {
    const plan = decide(
      input({ ...down, catchup: "catch_up", maxCatchUp: 3, overlap: "allow", catchupWindowMs: 16 * 60_000 }),
    );
    expect(starts(plan)).toEqual(["2026-11-15T00:20:00Z", "2026-11-15T00:30:00Z"]);
  });

  it("a per-second schedule down for a day is one missed row with count 86400", () => {
    const plan = decide(
      input({ interval: "1s", nextFireMs: t("2026-11-15T00:00:01Z"), now: t("2026-11-16T00:01:00.5Z") }),
    );
    const missed = plan.ledger.find((l) => l.kind === "missed");
    // Late (≤ 60 s): 00:00:01 … 00:01:00 of the 16th; the latest of those starts.
    expect(starts(plan)).toEqual(["2026-11-16T00:01:00Z"]);
    expect(missed).toEqual({
      kind: "missed",
      count: 86400 + 59,
      from: t("2026-11-15T00:00:01Z"),
      to: t("2026-11-16T00:00:59Z"),
    });
    expect(plan.ledger.filter((l) => l.kind === "missed")).toHaveLength(1);
  });
});

describe("decide: overlap (docs/design.md § Overlap)", () => {
  it("skip while the previous runs", () => {
    const plan = decide(input({ blocker: "schedule" }));
    expect(plan.starts).toEqual([]);
    expect(plan.ledger).toEqual([{ kind: "skipped", occurrence: t("2026-11-15T00:10:00Z"), reason: "overlap" }]);
    expect(plan.skipped).toBe(1);
  });

  it("a concurrency key held elsewhere skips with reason concurrency", () => {
    const plan = decide(input({ blocker: "key" }));
    expect(plan.ledger).toEqual([{ kind: "skipped", occurrence: t("2026-11-15T00:10:00Z"), reason: "concurrency" }]);
  });

  it("allow starts anyway; cancel_previous cancels first", () => {
    expect(decide(input({ blocker: "schedule", overlap: "allow" })).starts[0]?.cancelBefore).toBe(false);
    expect(decide(input({ blocker: "schedule", overlap: "cancel_previous" })).starts[0]?.cancelBefore).toBe(true);
  });

  it("buffer_one keeps one pending and skips later ones as buffer_full", () => {
    const plan = decide(input({ blocker: "schedule", overlap: "buffer_one", buffered: [t("2026-11-15T00:00:00Z")] }));
    expect(plan.ledger).toEqual([{ kind: "skipped", occurrence: t("2026-11-15T00:10:00Z"), reason: "buffer_full" }]);
    expect(plan.buffered).toEqual([t("2026-11-15T00:00:00Z")]);
  });

  it("a buffered occurrence starts when nothing runs any more, before the new one is decided", () => {
    const plan = decide(input({ overlap: "buffer_one", buffered: [t("2026-11-15T00:00:00Z")] }));
    expect(starts(plan)).toEqual(["2026-11-15T00:00:00Z"]);
    expect(plan.buffered).toEqual([t("2026-11-15T00:10:00Z")]);
  });

  it("trigger follows the overlap policy", () => {
    expect(decideTrigger("skip", "schedule")).toBe("not_started");
    expect(decideTrigger("skip", "none")).toBe("start");
    expect(decideTrigger("cancel_previous", "schedule")).toBe("cancel_and_start");
    expect(decideTrigger("allow", "key")).toBe("start");
  });
});

describe("decide: jitter and end", () => {
  it("an occurrence is not due before its jitter elapsed", () => {
    const base = input({ jitterMs: 30_000, now: t("2026-11-15T00:10:00Z") });
    const plan = decide(base);
    expect(plan.advanced).toBe(false);
  });

  it("an ended timing advances to null", () => {
    const timing = compileTiming({ interval: "10m", endAt: t("2026-11-15T00:10:00Z") }).timing;
    const plan = decide({ ...input({}), timing });
    expect(starts(plan)).toEqual(["2026-11-15T00:10:00Z"]);
    expect(plan.nextFireMs).toBeNull();
  });
});
