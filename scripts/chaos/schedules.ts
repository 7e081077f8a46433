/** The chaos workload: a no-op workflow and a mix of schedules covering every policy. */
import { defineWorkflow } from "../../src/index.js";

export const WORKFLOW = "ChaosNoop";

/** Finishes at once, or after a short pause so that overlap policies have something to overlap. */
export const ChaosNoop = defineWorkflow<{ sleep_ms?: number }>({
  name: WORKFLOW,
  version: "1.0.0",
  async run(_ctx, input) {
    if (input.sleep_ms) await new Promise((r) => setTimeout(r, input.sleep_ms));
    return { ok: true };
  },
});

/** Every overlap policy, every catch-up policy, a 6-field cron, and a shared concurrency key. */
export const CHAOS_SCHEDULES: readonly Record<string, unknown>[] = [
  { schedule_id: "i1-allow", interval: "1s", overlap: "allow" },
  { schedule_id: "i1-skip-slow", interval: "1s", overlap: "skip", input: { sleep_ms: 2500 } },
  { schedule_id: "i1-cancel-slow", interval: "1s", overlap: "cancel_previous", input: { sleep_ms: 1500 } },
  { schedule_id: "i2-buffer-one", interval: "2s", overlap: "buffer_one", input: { sleep_ms: 3000 } },
  { schedule_id: "i2-buffer-all", interval: "2s", overlap: "buffer_all", input: { sleep_ms: 2100 } },
  { schedule_id: "cron-2s", cron: "*/2 * * * * *", overlap: "allow" },
  { schedule_id: "i1-catch-up", interval: "1s", overlap: "allow", catchup: "catch_up", max_catch_up: 5 },
  { schedule_id: "i1-run-once", interval: "1s", overlap: "allow", catchup: "run_once" },
  { schedule_id: "i1-skip-missed", interval: "1s", overlap: "allow", catchup: "skip_missed" },
  {
    schedule_id: "i3-window",
    interval: "3s",
    overlap: "allow",
    catchup: "catch_up",
    max_catch_up: 100,
    catchup_window: "10s",
  },
  { schedule_id: "key-a", interval: "1s", overlap: "skip", concurrency_key: "k", input: { sleep_ms: 1500 } },
  { schedule_id: "key-b", interval: "1s", overlap: "skip", concurrency_key: "k", input: { sleep_ms: 1500 } },
];
